#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora and dictionaries (scripts/fuzz.sh).

    make_seeds.py REPO_ROOT OUT_DIR

OUT_DIR/<target>/ gets one file per seed: for `syn` every .syn file of the
examples and tests, for `mlir` and `pipeline` every .mlir file, both split
at their `// -----` markers (each chunk is a program of its own); for `idx`
small IDX files of every element type, plain and gzip'd; for `checkpoint`
a header-only checkpoint. OUT_DIR/<target>.dict lists each grammar's
keywords (the identifiers and op names the seeds use) for libFuzzer's
-dict.
"""
import gzip
import hashlib
import os
import re
import struct
import sys

MAX_LEN = 65536


def chunks(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for chunk in re.split(r"(?m)^// -----.*$", text):
        data = chunk.encode()
        if data.strip() and len(data) <= MAX_LEN:
            yield data


def files(root, suffix):
    for top in ("examples", "test"):
        for dirpath, dirnames, names in os.walk(os.path.join(root, top)):
            dirnames[:] = [d for d in dirnames if d != "fuzz"]
            for name in sorted(names):
                if name.endswith(suffix):
                    yield os.path.join(dirpath, name)


def write(out, target, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)


def write_dict(out, target, words):
    with open(os.path.join(out, target + ".dict"), "w") as f:
        for w in sorted(words):
            f.write('"%s"\n' % w.replace("\\", "\\\\").replace('"', '\\"'))


def idx(type_code, dims, values, fmt):
    header = struct.pack(">I", (type_code << 8) | len(dims)) + b"".join(
        struct.pack(">I", d) for d in dims)
    return header + b"".join(struct.pack(">" + fmt, v) for v in values)


def main():
    root, out = sys.argv[1], sys.argv[2]
    syn_words, mlir_words = set(), set()
    for path in files(root, ".syn"):
        for data in chunks(path):
            write(out, "syn", data)
            syn_words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]{1,30}", data.decode()))
    for path in files(root, ".mlir"):
        for data in chunks(path):
            write(out, "mlir", data)
            write(out, "pipeline", data)
            text = data.decode()
            mlir_words.update(re.findall(r"\b[a-z][a-z0-9_]*\.[a-z_][a-z0-9_.]*", text))
            mlir_words.update(re.findall(r"![a-z0-9_]+\.[a-z_]+<", text))
            mlir_words.update(re.findall(r"#[a-z0-9_]+\.[a-z_]+<", text))
    mlir_words = {w for w in mlir_words if len(w) <= 40}
    write_dict(out, "syn", syn_words)
    write_dict(out, "mlir", mlir_words)
    write_dict(out, "pipeline", mlir_words)

    seeds = [
        idx(0x08, [2, 3, 3], range(18), "B"),
        idx(0x08, [4], [1, 2, 3, 9], "B"),
        idx(0x09, [2, 2], [-1, 2, -3, 4], "b"),
        idx(0x0B, [3], [-300, 0, 300], "h"),
        idx(0x0C, [2], [70000, -5], "i"),
        idx(0x0D, [2, 1], [0.5, -2.0], "f"),
        idx(0x0E, [1], [3.25], "d"),
    ]
    for data in seeds:
        write(out, "idx", data)
        write(out, "idx", gzip.compress(data, mtime=0))
    with open(os.path.join(out, "idx.dict"), "w") as f:
        for magic in (b"\x00\x00\x08\x03", b"\x00\x00\x08\x01", b"\x1f\x8b\x08\x00"):
            f.write('"%s"\n' % "".join("\\x%02x" % b for b in magic))

    # A checkpoint with the magic, the version and room for its fields (the
    # fuzzer rewrites the final checksum word itself).
    write(out, "checkpoint", b"SYNCKPT1" + struct.pack("<Q", 1) + b"\x00" * 112)
    write_dict(out, "checkpoint", {"SYNCKPT1"})


if __name__ == "__main__":
    main()
