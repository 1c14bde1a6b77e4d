#!/usr/bin/python3
"""Each kernel of a compiled training step against the machine's roofline.

Compiles a workload with synplc, counts every kernel's work with
`synpl-opt --synpl-l0-kernel-work` (flops; bytes of the buffers it binds,
what it must move at least), runs the executable with --profile for its
per-kernel times, and measures the machine's two ceilings in the same run,
at the same thread count:

  * compute: float32 matrix multiply at 1024^3 through PyTorch (OpenBLAS
    SGEMM), in GFLOP/s;
  * memory: copies through PyTorch, in GB/s (bytes read + written): of
    4 MiB arrays (the working set stays in the last-level cache) and of
    64 MiB arrays (main memory).

A kernel's roofline time is max(flops / compute, bytes / memory), memory
being the cache's bandwidth when the bytes it binds fit in half the
last-level cache (/sys/devices/system/cpu/cpu0/cache), else main memory's;
its share
of the roofline is that time over its measured time (100% = at the
ceiling that binds it). The ceilings are measured before and after the
profile run and the higher of each is kept.

Needs Debian's python3-torch and libopenblas0-pthread (bench/install-deps.sh).
Usage: /usr/bin/python3 bench/roofline.py [--workload mlp|cnn|charlm]
           [--threads 1] [--steps 200] [--top 25]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = {
    "mlp": os.path.join(ROOT, "examples", "fashion_mnist", "fashion_mnist.syn"),
    "cnn": os.path.join(ROOT, "examples", "fashion_mnist_cnn", "fashion_mnist_cnn.methods.syn"),
    "charlm": os.path.join(ROOT, "examples", "charlm", "charlm.methods.syn"),
}

CEILINGS = r"""
import sys, time, torch
torch.set_num_threads(int(sys.argv[1]))
def best(f, reps):
    f()
    t = []
    for _ in range(reps):
        s = time.perf_counter(); f(); t.append(time.perf_counter() - s)
    return min(t)
a = torch.rand(1024, 1024); b = torch.rand(1024, 1024); c = torch.empty(1024, 1024)
mm = best(lambda: torch.mm(a, b, out=c), 7)
def copy(n, reps):
    x = torch.rand(n); y = torch.empty(n)
    return 2 * n * 4 / best(lambda: y.copy_(x), reps) / 1e9
print(2 * 1024 ** 3 / mm / 1e9, copy(1 << 20, 200), copy(16 << 20, 9))
"""


def last_level_cache():
    """Bytes of the largest cache cpu0 sees (0 if unknown)."""
    best = 0
    base = "/sys/devices/system/cpu/cpu0/cache"
    for index in os.listdir(base) if os.path.isdir(base) else []:
        try:
            with open(os.path.join(base, index, "size")) as f:
                text = f.read().strip()
        except OSError:
            continue
        m = re.match(r"(\d+)([KMG]?)", text)
        if m:
            best = max(best, int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)])
    return best


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r


def ceilings(threads):
    # torch.set_num_threads sizes PyTorch's own pool; OpenBLAS (under
    # torch.mm) sizes its pool from the environment.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run(["/usr/bin/python3", "-c", CEILINGS, str(threads)], capture_output=True,
                         text=True, env=env)
    if out.returncode != 0:
        sys.exit("measuring the ceilings failed:\n" + out.stderr)
    return [float(v) for v in out.stdout.split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="mlp")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--top", type=int, default=25, help="kernels listed (by time); the rest summed")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    # The PyTorch peer and OpenBLAS (Debian packages; nothing when installed).
    subprocess.run(["bash", os.path.join(ROOT, "bench", "install-deps.sh")], check=True)
    program = WORKLOADS[a.workload]
    bindir = os.path.join(a.build, "bin")

    with tempfile.TemporaryDirectory() as tmp:
        exe, l0 = os.path.join(tmp, "train"), os.path.join(tmp, "plan.l0.mlir")
        run([os.path.join(bindir, "synplc"), program, "-o", exe])
        run([os.path.join(bindir, "synplc"), program, "--compile-to=l0", "-o", l0])
        remarks = run([os.path.join(bindir, "synpl-opt"), l0, "--synpl-l0-kernel-work",
                       "-o", os.devnull]).stderr
        work = {}
        for name, flops, touched, partial in re.findall(
                r"remark: kernel @(\S+): (\d+) flop, (\d+) B touched, \d+ B accessed, "
                r"[0-9.]+ flop/B( \(partial)?", remarks):
            work[name] = (float(flops), float(touched), bool(partial))

        before = ceilings(a.threads)
        prof = run([exe, "--steps", str(a.steps), "--no-eval", "--quiet", "--profile",
                    "--threads", str(a.threads)])
        after = ceilings(a.threads)
    peak, cache_bw, dram_bw = (max(x, y) for x, y in zip(before, after))
    llc = last_level_cache()

    def roofline(flops, touched):
        """The kernel's time at its ceiling, and which ceiling binds."""
        compute = flops / (peak * 1e9)
        memory = touched / ((cache_bw if touched <= llc / 2 else dram_bw) * 1e9)
        return max(compute, memory), "compute" if compute >= memory else "memory"

    header = re.search(r"(\d+) training steps in ([0-9.]+) s", prof.stderr)
    steps, seconds = int(header.group(1)), float(header.group(2))
    rows = []
    for name, calls, total_ms in re.findall(
            r"^\s+(\S+)\s+(\d+)\s+([0-9.]+)\s+[0-9.]+\s+[0-9.]+\s*$", prof.stderr, re.M):
        if name not in work:
            continue
        calls, total = int(calls), float(total_ms) / 1e3
        flops, touched, partial = work[name]
        per_call = total / calls
        roof, bound = roofline(flops, touched)
        rows.append((name, calls, total, flops, touched, per_call, roof, bound, partial))
    rows.sort(key=lambda r: -r[2])
    kernels_s = sum(r[2] for r in rows)
    roof_s = sum(r[6] * r[1] for r in rows)

    print(f"{os.path.relpath(program, ROOT)}: {steps} steps in {seconds:.2f} s at {a.threads} thread(s), "
          f"{seconds / steps * 1e3:.3f} ms per step")
    print(f"ceilings at {a.threads} thread(s): compute {peak:.1f} GFLOP/s (SGEMM 1024^3); memory "
          f"{cache_bw:.1f} GB/s in cache (4 MiB copy; kernels binding up to {llc / 2 / 2**20:.0f} MiB), "
          f"{dram_bw:.1f} GB/s from main memory (64 MiB copy)")
    print(f"\n  {'kernel':<40} {'us/call':>9} {'step %':>7} {'GFLOP/s':>8} {'GB/s':>7} "
          f"{'flop/B':>7} {'bound':>7} {'roofline':>9}")
    for name, calls, total, flops, touched, per_call, roof, bound, partial in rows[:a.top]:
        print(f"  {name[-40:]:<40} {per_call * 1e6:>9.1f} {100 * total / seconds:>6.1f}% "
              f"{flops / per_call / 1e9:>8.1f} {touched / per_call / 1e9:>7.1f} "
              f"{flops / touched if touched else 0:>7.2f} {bound:>7} {100 * roof / per_call:>8.1f}%"
              + (" (user code not counted)" if partial else ""))
    rest = rows[a.top:]
    if rest:
        t = sum(r[2] for r in rest)
        r_s = sum(r[6] * r[1] for r in rest)
        print(f"  {'(%d more kernels)' % len(rest):<40} {'':>9} {100 * t / seconds:>6.1f}% "
              f"{'':>8} {'':>7} {'':>7} {'':>7} {100 * r_s / t if t else 0:>8.1f}%")
    print(f"\n  kernels {100 * kernels_s / seconds:.1f}% of the step; at their rooflines they would take "
          f"{1e3 * roof_s / steps:.3f} ms per step of the measured {1e3 * kernels_s / steps:.3f} "
          f"({100 * roof_s / kernels_s:.1f}% of the roofline overall)")


if __name__ == "__main__":
    main()
