#!/usr/bin/python3
"""Training throughput of a compiled Fashion-MNIST program against PyTorch.

--workload mlp (default): examples/fashion_mnist/fashion_mnist.l1.mlir
against ../shared/peers/torch_mlp.py (same model, loss, Adam + schedule,
batch 128); --workload cnn: examples/fashion_mnist_cnn/
fashion_mnist_cnn.methods.syn against ../shared/peers/torch_cnn.py (the same
two-convolution network, Adam 1e-3, batch 128).

Compiles the program with synplc, then runs, interleaved for --rounds rounds
so that both see the same load on the noisy cores:
  * the compiled program: --steps N --no-eval --quiet, at 1 and 2 threads;
  * the peer with --bench-only at 2 and 1 threads (its own timed steps after
    warm-up steps).
Reports the median samples/s of each and the ratio compiled / PyTorch per
thread count, then one --profile run of the compiled program (its per-kernel
time table). With --epochs E it also trains both for E epochs and reports
accuracy and samples/s from their `epoch=` lines.

Needs Debian's python3-torch and libopenblas0-pthread (bench/install-deps.sh).
Usage: /usr/bin/python3 bench/train_vs_torch.py [--workload mlp|cnn] [--rounds 3]
           [--steps 200] [--epochs 0]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(os.path.dirname(ROOT), "shared", "peers")
WORKLOADS = {
    "mlp": (os.path.join(ROOT, "examples", "fashion_mnist", "fashion_mnist.l1.mlir"),
            os.path.join(PEERS, "torch_mlp.py")),
    "cnn": (os.path.join(ROOT, "examples", "fashion_mnist_cnn", "fashion_mnist_cnn.methods.syn"),
            os.path.join(PEERS, "torch_cnn.py")),
}


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed ({r.returncode}): {' '.join(cmd)}\n{r.stdout}\n{r.stderr}")
    return r


def compiled_rate(exe, threads, steps):
    out = run([exe, "--steps", str(steps), "--no-eval", "--quiet", "--threads", str(threads)]).stdout
    m = re.search(r"samples_per_s=([0-9.]+)", out)
    return float(m.group(1))


def peer_rates(peer):
    """samples/s at 1 and 2 threads (the MLP peer times both in one run,
    the CNN peer one thread count per run)."""
    rates = {}
    for threads in ((None,) if peer.endswith("torch_mlp.py") else (2, 1)):
        cmd = ["/usr/bin/python3", peer, "--bench-only"]
        if threads:
            cmd += ["--threads", str(threads)]
        out = run(cmd).stdout
        rates.update({int(t): float(s) for t, s in re.findall(
            r"^bench threads=(\d+) ms_per_step=[0-9.]+ samples_per_s=([0-9.]+)", out, re.M)})
    return rates


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=200, help="timed steps of the compiled program per run")
    ap.add_argument("--epochs", type=int, default=0, help="also train both for this many epochs")
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="mlp")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--peer", help="the peer script (default: the workload's)")
    a = ap.parse_args()
    # The PyTorch peer and OpenBLAS (Debian packages; nothing when installed).
    subprocess.run(["bash", os.path.join(ROOT, "bench", "install-deps.sh")], check=True)
    PROGRAM, peer = WORKLOADS[a.workload]
    a.peer = a.peer or peer

    tmp = tempfile.mkdtemp()
    exe = os.path.join(tmp, "train")
    run([os.path.join(a.build, "bin", "synplc"), PROGRAM, "-o", exe])
    print(f"compiled {os.path.relpath(PROGRAM, ROOT)} -> {exe}", flush=True)

    ours = {1: [], 2: []}
    theirs = {1: [], 2: []}
    for r in range(a.rounds):
        for t in (2, 1):
            ours[t].append(compiled_rate(exe, t, a.steps))
        p = peer_rates(a.peer)
        for t in (2, 1):
            theirs[t].append(p[t])
        print(f"round {r + 1}: compiled 2T {ours[2][-1]:.0f} 1T {ours[1][-1]:.0f} | "
              f"torch 2T {theirs[2][-1]:.0f} 1T {theirs[1][-1]:.0f} samples/s", flush=True)

    print("\ntraining throughput, median of", a.rounds, "interleaved rounds (samples/s, batch 128):")
    print(f"  {'threads':>7} {'compiled':>10} {'pytorch':>10} {'ratio':>7}")
    for t in (1, 2):
        o, p = statistics.median(ours[t]), statistics.median(theirs[t])
        print(f"  {t:>7} {o:>10.0f} {p:>10.0f} {o / p:>6.2f}x")

    prof = run([exe, "--steps", str(a.steps), "--no-eval", "--quiet", "--profile"])
    print("\ncompiled program, default threads:", prof.stdout.strip())
    print(prof.stderr.rstrip())

    if a.epochs:
        print(f"\n{a.epochs} epochs each (accuracy on the 10,000 test images):")
        ours_out = run([exe, "--epochs", str(a.epochs), "--quiet"]).stdout
        epochs = ["--epochs", str(a.epochs)] if a.workload == "cnn" else [str(a.epochs)]
        peer_out = run(["/usr/bin/python3", a.peer] + epochs + ["--no-bench", "--threads", "2"]).stdout
        for name, out in (("compiled", ours_out), ("pytorch", peer_out)):
            for line in re.findall(r"^epoch=.*$", out, re.M):
                print(f"  {name:>8}: {line}")


if __name__ == "__main__":
    main()
