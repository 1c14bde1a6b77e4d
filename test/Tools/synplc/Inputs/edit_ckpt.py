#!/usr/bin/env python3
"""Rewrites one 8-byte field of a synplexum checkpoint and recomputes its
FNV-1a checksum, so the file stays well-formed but says something else:
  edit_ckpt.py IN OUT WORD VALUE   (WORD: 0 magic, 1 version, 2 fingerprint,
                                    3 epoch, 4 batch, 5 global step, ...)
"""
import struct
import sys

src, dst, word, value = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
b = bytearray(open(src, "rb").read())
b[8 * word:8 * word + 8] = struct.pack("<q", value)
h = 0xCBF29CE484222325
for c in b[:-8]:
    h = ((h ^ c) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
b[-8:] = struct.pack("<Q", h)
open(dst, "wb").write(b)
