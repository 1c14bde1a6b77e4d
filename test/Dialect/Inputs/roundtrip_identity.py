"""print -> parse -> print is the identity, in the custom and the generic
form, for every dialect's round-trip file and every example: the second
print equals the first byte for byte, and the generic form read back prints
the same custom form."""
import glob
import os
import subprocess
import sys

synpl_opt, src = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(src, "test", "Dialect", "*", "ops.mlir")) +
               glob.glob(os.path.join(src, "examples", "**", "*.mlir"), recursive=True))


def opt(text, *flags):
    proc = subprocess.run([synpl_opt, "-", *flags], input=text, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return proc.stdout


bad = 0
for path in files:
    rel = os.path.relpath(path, src)
    try:
        first = opt(open(path).read())
        second = opt(first)
        generic = opt(first, "-mlir-print-op-generic")
        generic2 = opt(generic, "-mlir-print-op-generic")
        from_generic = opt(generic)
    except RuntimeError as e:
        print("FAIL %s: does not verify:\n%s" % (rel, e))
        bad += 1
        continue
    for what, a, b in (("custom print -> parse -> print", first, second),
                       ("generic print -> parse -> print", generic, generic2),
                       ("generic -> custom", first, from_generic)):
        if a != b:
            print("FAIL %s: %s is not the identity" % (rel, what))
            bad += 1
    print("ok %s" % rel)
print("%d files, %d failures" % (len(files), bad))
sys.exit(1 if bad else 0)
