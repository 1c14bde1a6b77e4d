"""compare_losses.py A B RTOL: the `epoch=E loss=L` lines of two runs agree
to a relative tolerance (and there are as many, at least one)."""
import re
import sys


def losses(path):
    return [float(m.group(1)) for m in re.finditer(r"^epoch=\d+ loss=([-0-9.e+naninf]+)",
                                                    open(path).read(), re.M)]


a, b, rtol = losses(sys.argv[1]), losses(sys.argv[2]), float(sys.argv[3])
if not a or len(a) != len(b):
    sys.exit(f"loss lines differ in number: {a} vs {b}")
for x, y in zip(a, b):
    if not abs(x - y) <= rtol * max(abs(x), abs(y)):
        sys.exit(f"losses differ beyond {rtol}: {a} vs {b}")
print(f"{len(a)} losses agree within {rtol}")
