#!/usr/bin/env python3
"""Parse-and-verify throughput of synpl-opt on a generated L1 program.

Generates an L1 program with N primitive tensor ops (default 10,000) in one
tensor graph, a mix of elementwise, matmul, transcendental, movement, reduce
and constant ops, every value consumed (so the L1.8 reachability, L1.5 shape
and L1.10 cycle checks all do their full work), and times `synpl-opt` parsing,
verifying and printing it. The peer, run interleaved in the same script, is
upstream `mlir-opt` on a program of the same op count in upstream dialects
(func/arith/math on tensors): the ratio is synplexum's cost over MLIR's own
parse/verify/print floor on this machine.

usage: bench/verify_scale.py [--ops N] [--runs R] [--build DIR]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

T = "tensor<64x64xf32>"
V = "tensor<64xf32>"
S = "tensor<f32>"


def synpl_program(n_ops):
    lines = [
        "l1.system @bench {",
        '  l1.node @ram_0 memory {capacity = "32GB"}',
        '  l1.node @cpu_0 compute {isa = "x86_64", cores = 8}',
        '  l1.node @gpu_0 compute {isa = "cuda", vram = "24GB", sm = 84}',
        '  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"',
        '  l1.edge @cpu_0 <-> @gpu_0 bandwidth "32GB/s"',
        "}",
        f"l1.stage @sink on @cpu_0 process(%r: !l1.buf<@gpu_0, {T}>) {{",
        f"  l1.drop %r : !l1.buf<@gpu_0, {T}>",
        "  l1.end",
        "}",
        f"l1.tensor_graph @chain on @gpu_0 then @sink compute(%a: {T}, %b: {T}) {{",
    ]
    prev2, prev = "%a", "%b"
    count, i = 0, 0
    binary = ["add", "sub", "mul", "max", "div", "min"]
    unary = ["exp", "tanh", "neg", "abs", "sqrt", "log"]
    while count < n_ops:
        k = i % 8
        v = f"%v{i}"
        if k in (0, 3, 6):
            op = binary[(i // 8 + k) % len(binary)]
            lines.append(f"  {v} = l1.{op} {prev}, {prev2} : {T}, {T} -> {T}")
            count += 1
        elif k == 1:
            lines.append(f"  {v} = l1.matmul {prev}, {prev2} : {T}, {T} -> {T}")
            count += 1
        elif k in (2, 5):
            op = unary[(i // 8 + k) % len(unary)]
            lines.append(f"  {v} = l1.{op} {prev} : {T} -> {T}")
            count += 1
        elif k == 4:
            lines.append(f"  {v}r = l1.reduce_sum {prev} axis 1 : {T} -> {V}")
            lines.append(f"  {v} = l1.broadcast {v}r dims [0] : {V} -> {T}")
            count += 2
        else:
            lines.append(f"  {v}c = l1.const 5.0e-01 : {S}")
            lines.append(f"  {v}s = l1.scale {prev}, {v}c : {T}, {S} -> {T}")
            lines.append(f"  {v} = l1.transpose {v}s perm [1, 0] : {T} -> {T}")
            count += 3
        prev2, prev = prev, v
        i += 1
    lines.append(f"  l1.return {prev} : {T}")
    lines.append("}")
    return "\n".join(lines) + "\n", count


def peer_program(n_ops):
    lines = [f"func.func @chain(%a: {T}, %b: {T}) -> {T} {{"]
    prev2, prev = "%a", "%b"
    ops = ["arith.addf", "arith.subf", "arith.mulf", "arith.maximumf", "math.exp", "math.tanh"]
    for i in range(n_ops):
        op = ops[i % len(ops)]
        v = f"%v{i}"
        if op.startswith("math."):
            lines.append(f"  {v} = {op} {prev} : {T}")
        else:
            lines.append(f"  {v} = {op} {prev}, {prev2} : {T}")
        prev2, prev = prev, v
    lines.append(f"  return {prev} : {T}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def time_once(cmd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"error: {' '.join(cmd)} failed:\n{proc.stderr[:2000]}")
    return elapsed


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--build", default=os.path.join(root, "build"))
    args = ap.parse_args()

    synpl_opt = os.path.join(args.build, "bin", "synpl-opt")
    mlir_opt = "/usr/lib/llvm-22/bin/mlir-opt"
    with tempfile.TemporaryDirectory() as tmp:
        text, n = synpl_program(args.ops)
        prog = os.path.join(tmp, "l1_chain.mlir")
        with open(prog, "w") as f:
            f.write(text)
        peer = os.path.join(tmp, "peer_chain.mlir")
        with open(peer, "w") as f:
            f.write(peer_program(n))
        # Startup floor: the same tools on an empty module.
        empty = os.path.join(tmp, "empty.mlir")
        open(empty, "w").close()

        ours, theirs, floor = [], [], []
        for r in range(args.runs):  # interleaved: the two see the same machine load
            ours.append(time_once([synpl_opt, prog, "-o", os.devnull]))
            theirs.append(time_once([mlir_opt, peer, "-o", os.devnull]))
            floor.append(time_once([synpl_opt, empty, "-o", os.devnull]))
            print(f"run {r + 1}/{args.runs}: synpl-opt {ours[-1] * 1e3:.1f} ms, "
                  f"mlir-opt {theirs[-1] * 1e3:.1f} ms", file=sys.stderr)

    med = statistics.median
    print(f"L1 program: {n} tensor ops in one tensor graph ({len(text) // 1024} KiB)")
    print(f"synpl-opt parse+verify+print: median {med(ours) * 1e3:.1f} ms "
          f"(min {min(ours) * 1e3:.1f}; process start-up {med(floor) * 1e3:.1f} ms)")
    print(f"peer mlir-opt, {n} func/arith/math ops: median {med(theirs) * 1e3:.1f} ms")
    print(f"ratio synpl-opt / mlir-opt: {med(ours) / med(theirs):.2f}")
    print(f"throughput: {n / med(ours):,.0f} ops/s")


if __name__ == "__main__":
    main()
