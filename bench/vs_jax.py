#!/usr/bin/python3
"""The spec's MNIST workload against XLA (JAX) and PyTorch, interleaved.

The peers are ../shared/peers/jax_mlp.py (the whole training step jit-compiled
by XLA: the compiler peer) and ../shared/peers/torch_mlp.py (PyTorch eager),
with the same model, loss, Adam + schedule, data and batch (128). The
compiled program is the spec itself, examples/fashion_mnist/fashion_mnist.syn,
through synplc.

  * training throughput: for --rounds rounds, in turn, the compiled program
    (--steps N --no-eval --quiet at 2 and 1 threads), JAX (--bench-only
    --threads 2 and 1: 200 timed steps after 20 warm-up steps) and PyTorch
    (--bench-only); the medians and the ratios compiled / JAX and compiled /
    PyTorch per thread count;
  * compile time: synplc .syn -> executable, cold (--no-cache) and warm
    (every object from a cache the first compile filled), and warm after a
    learning-rate change (the spec's L2 program, --emit=l2, with Adam's lr
    changed to a value no earlier compile saw, compiled with the same
    cache: the L3 -> L2 search is already done there), the medians of the
    rounds, against JAX's compile_s (trace + XLA compile + the first step);
  * start-up: the executable from exec to exit after one step of one epoch
    (data sets decoded and cached by the runs before), the median.

JAX comes from PyPI into a virtual environment this script makes once
(bench/.venv-jax, git-ignored; --venv DIR for another); PyTorch is Debian's
python3-torch (bench/install-deps.sh).

Usage: /usr/bin/python3 bench/vs_jax.py [--rounds 3] [--steps 400] [--build build]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(os.path.dirname(ROOT), "shared", "peers")
SPEC = os.path.join(ROOT, "examples", "fashion_mnist", "fashion_mnist.syn")


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r


def jax_python(venv):
    """The venv's python, with jax installed (made on first use)."""
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        print(f"making {os.path.relpath(venv, ROOT)} (JAX from PyPI) ...", flush=True)
        run(["/usr/bin/python3", "-m", "venv", venv])
    if subprocess.run([py, "-c", "import jax"], capture_output=True).returncode != 0:
        run([py, "-m", "pip", "install", "-q", "jax", "jaxlib", "numpy"])
    return py


def compiled_rate(exe, threads, steps):
    out = run([exe, "--steps", str(steps), "--no-eval", "--quiet", "--threads", str(threads)]).stdout
    return float(re.search(r"samples_per_s=([0-9.]+)", out).group(1))


def jax_run(py, threads):
    """(samples/s, compile_s) of one --bench-only run."""
    out = run([py, os.path.join(PEERS, "jax_mlp.py"), "--bench-only",
               "--threads", str(threads)]).stdout
    rate = float(re.search(r"^bench threads=\d+ ms_per_step=[0-9.]+ samples_per_s=([0-9.]+)",
                           out, re.M).group(1))
    compile_s = float(re.search(r"^compile_s=([0-9.]+)", out, re.M).group(1))
    return rate, compile_s


def torch_rates():
    out = run(["/usr/bin/python3", os.path.join(PEERS, "torch_mlp.py"), "--bench-only"]).stdout
    return {int(t): float(s) for t, s in re.findall(
        r"^bench threads=(\d+) ms_per_step=[0-9.]+ samples_per_s=([0-9.]+)", out, re.M)}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--venv", default=os.path.join(ROOT, "bench", ".venv-jax"))
    a = ap.parse_args()
    # The PyTorch peer and OpenBLAS (Debian packages; nothing when installed).
    subprocess.run(["bash", os.path.join(ROOT, "bench", "install-deps.sh")], check=True)
    synplc = os.path.join(a.build, "bin", "synplc")
    py = jax_python(a.venv)
    jax_version = run([py, "-c", "import jax; print(jax.__version__)"]).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="synpl-vs-jax-")
    exe = os.path.join(tmp, "train")

    ours = {1: [], 2: []}
    jax = {1: [], 2: []}
    torch = {1: [], 2: []}
    compile_ours, compile_warm, compile_lr, compile_jax, start = [], [], [], [], []
    env = dict(os.environ, SYNPL_CACHE_DIR=os.path.join(tmp, "cache"))
    run([synplc, SPEC, "-o", exe], env=env)  # fills the cache
    # The L2 program the search chose; each round changes its learning rate.
    l2 = os.path.join(tmp, "l2.mlir")
    run([synplc, "--emit=l2", SPEC, "-o", l2], env=env)
    l2_text = open(l2).read()
    if "lr = " not in l2_text:
        sys.exit("the L2 program has no learning rate to change")
    run([synplc, l2, "-o", exe], env=env)
    for r in range(a.rounds):
        t0 = time.perf_counter()
        run([synplc, "--no-cache", SPEC, "-o", exe])
        compile_ours.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        run([synplc, SPEC, "-o", exe], env=env)
        compile_warm.append(time.perf_counter() - t0)
        changed = os.path.join(tmp, f"l2-lr{r}.mlir")
        with open(changed, "w") as f:
            f.write(re.sub(r"lr = [0-9.e+-]+", f"lr = {3e-4 * (1.01 + 0.01 * r):.6e}", l2_text))
        t0 = time.perf_counter()
        run([synplc, changed, "-o", exe + "-lr"], env=env)
        compile_lr.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        run([exe, "--steps", "1", "--epochs", "1", "--no-eval", "--quiet", "--threads", "1"])
        start.append(time.perf_counter() - t0)
        for threads in (2, 1):
            ours[threads].append(compiled_rate(exe, threads, a.steps))
            rate, compile_s = jax_run(py, threads)
            jax[threads].append(rate)
            compile_jax.append(compile_s)
        for threads, rate in torch_rates().items():
            torch[threads].append(rate)
        print(f"round {r + 1}: compiled 2T {ours[2][-1]:.0f} 1T {ours[1][-1]:.0f} | "
              f"jax 2T {jax[2][-1]:.0f} 1T {jax[1][-1]:.0f} | "
              f"torch 2T {torch[2][-1]:.0f} 1T {torch[1][-1]:.0f} | "
              f"compile {compile_ours[-1]:.2f} s (warm {compile_warm[-1]:.2f} s, "
              f"lr change {compile_lr[-1]:.2f} s) vs jax {compile_jax[-2]:.2f} s | "
              f"start {start[-1] * 1e3:.0f} ms", flush=True)

    med = statistics.median
    print(f"\ntraining throughput, median of {a.rounds} interleaved rounds "
          f"(samples/s, batch 128; JAX {jax_version}):")
    print(f"  {'threads':>7} {'compiled':>9} {'jax':>9} {'pytorch':>9} {'vs jax':>7} {'vs torch':>8}")
    for t in (1, 2):
        o, j, p = med(ours[t]), med(jax[t]), med(torch[t])
        print(f"  {t:>7} {o:>9.0f} {j:>9.0f} {p:>9.0f} {o / j:>6.2f}x {o / p:>7.2f}x")
    co, cw, cl, cj = med(compile_ours), med(compile_warm), med(compile_lr), med(compile_jax)
    print(f"\ncompile to a runnable step, median (s): JAX compile_s {cj:.2f}; synplc "
          f".syn -> executable cold {co:.2f} ({co / cj:.2f}x JAX), warm cache {cw:.2f} "
          f"({cw / cj:.2f}x JAX); L2 with a new learning rate, warm cache {cl:.2f} "
          f"({cl / cj:.2f}x JAX)")
    print(f"start-up, exec to exit after one step, median: {med(start) * 1e3:.0f} ms")


if __name__ == "__main__":
    sys.exit(main())
