"""Feeds synpl-opt every example cut short at many points, and byte-flipped
copies of it: each run must end with a located error and exit code 1 (or
succeed, where the cut happens to leave a valid program), never a crash,
an assertion or a hang."""
import glob
import os
import random
import subprocess
import sys
import tempfile

synpl_opt, examples_dir = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(examples_dir, "**", "*.mlir"), recursive=True))
if not files:
    sys.exit("no examples found under " + examples_dir)
rng = random.Random(1234)
runs = failures = 0
with tempfile.TemporaryDirectory() as tmp:
    for path in files:
        data = open(path, "rb").read()
        variants = []
        for k in range(1, 25):  # 24 cuts spread over the file
            variants.append(("cut@%d" % (len(data) * k // 25), data[: len(data) * k // 25]))
        for k in range(8):  # random byte damage
            b = bytearray(data)
            for _ in range(4):
                b[rng.randrange(len(b))] = rng.randrange(256)
            variants.append(("flip#%d" % k, bytes(b)))
        for name, content in variants:
            mutated = os.path.join(tmp, "input.mlir")
            with open(mutated, "wb") as f:
                f.write(content)
            try:
                proc = subprocess.run([synpl_opt, mutated, "-o", os.devnull],
                                      capture_output=True, timeout=60)
            except subprocess.TimeoutExpired:
                print("HANG: %s %s" % (path, name))
                failures += 1
                continue
            runs += 1
            err = proc.stderr.decode(errors="replace")
            located = "input.mlir:" in err and "error:" in err
            if proc.returncode not in (0, 1) or (proc.returncode == 1 and not located):
                print("BAD: %s %s exit=%d\n%s" % (path, name, proc.returncode, err[-2000:]))
                failures += 1
print("%d runs over %d examples, %d bad" % (runs, len(files), failures))
sys.exit(1 if failures else 0)
