#!/usr/bin/python3
"""The PyTorch peer of the Fashion-MNIST program on the GPU, for bench/gpu/check.sh.

Uses the peer's own model, loss, Adam and schedule (../shared/peers/torch_mlp.py, copied
into the bundle by bench/gpu/prepare.sh and imported from --peer) on `cuda`, eager mode:
  * step timing: --warmup steps, then --iters timed steps at batch 128, each step's end
    synchronised (torch.cuda.synchronize) so that the time is the GPU's, not the queue's;
  * with --epochs E: a full training run, printing the peer's `epoch=` lines.
Prints `bench device=cuda ms_per_step=M samples_per_s=S` (the line check.sh reads).
"""
import argparse
import importlib.util
import time

import torch


def load_peer(path):
    spec = importlib.util.spec_from_file_location("torch_mlp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", required=True, help="torch_mlp.py (the shared peer)")
    ap.add_argument("--data", required=True)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--iters", type=int, default=400)
    ap.add_argument("--epochs", type=int, default=0)
    args = ap.parse_args()
    peer = load_peer(args.peer)
    dev = torch.device("cuda")
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}", flush=True)
    xtr, ytr = peer.load_split("train", args.data)
    xte, yte = peer.load_split("t10k", args.data)
    xtr, ytr, xte, yte = xtr.to(dev), ytr.to(dev), xte.to(dev), yte.to(dev)

    torch.manual_seed(0)
    model = peer.make_model().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=peer.LR)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, peer.make_lr_lambda(10 ** 6))
    perm = torch.randperm(len(xtr), device=dev)
    B = peer.BATCH
    nb = len(xtr) // B
    for i in range(args.warmup):
        j = perm[(i % nb) * B:(i % nb + 1) * B]
        peer.train_step(model, opt, sched, xtr[j], ytr[j])
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for i in range(args.iters):
        j = perm[(i % nb) * B:(i % nb + 1) * B]
        peer.train_step(model, opt, sched, xtr[j], ytr[j])
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / args.iters
    print(f"bench device=cuda ms_per_step={dt * 1e3:.4f} samples_per_s={B / dt:.0f}", flush=True)

    if args.epochs:
        torch.manual_seed(0)
        model = peer.make_model().to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=peer.LR)
        total = args.epochs * nb
        sched = torch.optim.lr_scheduler.LambdaLR(opt, peer.make_lr_lambda(total))
        for e in range(args.epochs):
            perm = torch.randperm(len(xtr), device=dev)
            t0 = time.perf_counter()
            s = 0.0
            for b in range(nb):
                j = perm[b * B:(b + 1) * B]
                loss, _ = peer.train_step(model, opt, sched, xtr[j], ytr[j])
                s += float(loss)
            torch.cuda.synchronize()
            dt = time.perf_counter() - t0
            acc = peer.evaluate(model, xte, yte)
            print(f"epoch={e + 1} loss={s / nb:.6f} test_accuracy={acc:.4f} "
                  f"samples_per_s={nb * B / dt:.1f}", flush=True)


if __name__ == "__main__":
    main()
