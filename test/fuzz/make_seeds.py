#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora and dictionaries (scripts/fuzz.sh).

    make_seeds.py REPO_ROOT OUT_DIR [--synplc PATH] [--synpl-translate PATH]

OUT_DIR/<target>/ gets one file per seed: for `syn` every .syn file of the
examples and tests, for `mlir` and `pipeline` every .mlir file, both split
at their `// -----` markers (each chunk is a program of its own); for `idx`
small IDX files of every element type, plain and gzip'd; for `checkpoint`
a header-only checkpoint; for `text` short texts behind the three bytes
that choose the window, stride and batch; for `plan` the plan tables of
the examples as PATH (synplc) compiles them (none without --synplc); for
`ipu21` a minimal program file and the program files PATH
(synpl-translate --synpl-ipu21-to-program) makes of the ipu21 graphs of
the tests (none without --synpl-translate).
OUT_DIR/<target>.dict lists each grammar's
keywords (the identifiers and op names the seeds use) for libFuzzer's
-dict.
"""
import gzip
import hashlib
import os
import re
import struct
import subprocess
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


def llvm_bytes(text):
    """The bytes of an LLVM IR c"..." string (\\XX escapes)."""
    out, i = bytearray(), 0
    while i < len(text):
        if text[i] == "\\":
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
        else:
            out += text[i].encode("latin-1")
            i += 1
    return bytes(out)


def plan_seed(synplc, source):
    """The fuzz input of PlanFuzzer.cpp for a compiled example: the table's
    word count, its words, the string blob."""
    ir = subprocess.run([synplc, "--emit=llvm", source], check=True,
                        capture_output=True, text=True, encoding="latin-1").stdout
    table = re.search(r"@synpl_plan_table = internal constant \[(\d+) x i64\] \[([^\]]*)\]", ir)
    strings = re.search(r'@synpl_plan_strings = internal constant \[\d+ x i8\] c"([^"]*)"', ir)
    words = [int(w.split()[1]) for w in table.group(2).split(",")]
    assert len(words) == int(table.group(1))
    return (struct.pack("<Q", len(words)) + struct.pack("<%dq" % len(words), *words)
            + llvm_bytes(strings.group(1)))


# The examples whose plans seed the plan reader: the MLP (IDX ingests, a
# freelist), the character LM (a text ingest) and the MNIST L1 program.
PLAN_EXAMPLES = ["examples/fashion_mnist/fashion_mnist.l1.mlir",
                 "examples/mnist/mnist.l1.mlir", "examples/charlm/charlm.syn"]


# The ipu21 graphs whose program files seed the program reader and the
# simulator: every ipu21 op, both mapping forms, every step kind, and sends
# that read blocks of rows and advance with their Repeat, and a generic
# (UOp) codelet.
IPU21_GRAPHS = ["test/Dialect/IPU21/ops.mlir", "test/Target/IPU21/simulate.mlir",
                "test/Target/IPU21/serial-k.mlir", "test/Dialect/IPU21/uop-codelet.mlir"]


def ipu21_seed(translate, source):
    """The program file synpl-translate makes of an ipu21 graph."""
    return subprocess.run([translate, "--synpl-ipu21-to-program", source, "-o", "-"],
                          check=True, capture_output=True).stdout


def ipu21_file(payload):
    """An ipu21 program file around `payload` (ProgramFile.h): the magic,
    version 1, the reserved word, the payload's size and FNV-1a-64."""
    checksum = 0xcbf29ce484222325
    for b in payload:
        checksum = ((checksum ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return b"SYNIPU21" + struct.pack("<IIQQ", 1, 0, len(payload), checksum) + payload


def ipu21_minimal():
    """The smallest program worth running: one tile, no objects, a main that
    syncs twice in a Repeat."""
    def string(s):
        return struct.pack("<I", len(s)) + s

    def step(kind, count=0, body=()):
        return (struct.pack("<BqiI", kind, count, -1, 0) + struct.pack("<Q", len(body))
                + b"".join(body) + struct.pack("<Q", 0))

    target = struct.pack("<10q", 1, 638976, 16384, 6, 1490000000, 311296, 524288,
                         524288, 950272, 65535)
    objects = struct.pack("<5Q", 0, 0, 0, 0, 0)  # tensors .. exchanges
    main = step(0, body=[step(1, 2, [step(4)])])  # Sequence { Repeat 2 { Sync } }
    return ipu21_file(string(b"minimal") + string(b"ipu21") + target + objects + main)


def main():
    args = sys.argv[1:]
    tools = {"--synplc": None, "--synpl-translate": None}
    for flag in tools:
        if flag in args:
            i = args.index(flag)
            tools[flag] = args[i + 1]
            del args[i:i + 2]
    synplc, translate = tools["--synplc"], tools["--synpl-translate"]
    root, out = args
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

    # Texts: window 16, stride 1, batch 4; window 3, stride 2, batch 1;
    # and a file too short for a window.
    text = b"The quick brown fox jumps over the lazy dog.\n" * 4
    write(out, "text", bytes([15, 0, 3]) + text)
    write(out, "text", bytes([2, 1, 0]) + text[:40])
    write(out, "text", bytes([63, 0, 0]) + b"short")

    os.makedirs(os.path.join(out, "plan"), exist_ok=True)
    if synplc:
        for example in PLAN_EXAMPLES:
            write(out, "plan", plan_seed(synplc, os.path.join(root, example)))

    write(out, "ipu21", ipu21_minimal())
    if translate:
        for graph in IPU21_GRAPHS:
            write(out, "ipu21", ipu21_seed(translate, os.path.join(root, graph)))
    write_dict(out, "ipu21", {"SYNIPU21", "ipu21", "ipu2"})


if __name__ == "__main__":
    main()
