"""What the checks of the simulator's numbers share: rounding to an element
type, reading the simulator's number files, and the error bound of a
floating-point sum."""
import struct


def rounded(fmt, v):
    """v rounded to the struct format `fmt` ("e": f16, "f": f32)."""
    return struct.unpack(fmt, struct.pack(fmt, v))[0]


def read(path):
    """The whitespace-separated numbers of a file synpl-ipu21-sim wrote."""
    with open(path) as f:
        return [float(t) for t in f.read().split()]


def gamma(n):
    """A sum of n terms in f32 is within gamma(n) times the sum of their
    magnitudes of the exact one: n u / (1 - n u), u = 2**-24 (Higham,
    Accuracy and Stability of Numerical Algorithms, 4.2)."""
    u = 2.0 ** -24
    return n * u / (1 - n * u)
