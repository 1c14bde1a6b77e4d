#!/usr/bin/env python3
"""Matrix products on the IPU21 sink: how much of the chip the planner uses.

For each shape, writes the l0uop kernel a product lowers to, plans and
places it (`synpl-opt --synpl-convert-l0uop-to-ipu21`, whose search report
names the plan), writes the program file (`synpl-translate
--synpl-ipu21-to-program`) and has the BSP simulator charge it
(`synpl-ipu21-sim --timing-only`). There is no IPU here: the peer is the
chip's own AMP peak from its facts (include/synpl/Target/IPU21/Facts.h),
1,472 tiles x 128 FLOP per cycle in FP16 (x 32 in FP32), the ceiling a
roofline compares with. Prints the plan, the tiles it uses, the cycles, the
time at the chip's clock, and the share of the peak.

usage: bench/ipu21_matmul.py [--build DIR] [--shapes MxKxN:f16,...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

# The spec's MNIST layers (batch 128, f32) and square FP16 products.
DEFAULT = "128x784x256:f32,128x256x256:f32,128x256x10:f32,1024x1024x1024:f16,4096x4096x4096:f16"
FLOP_PER_TILE_CYCLE = {"f16": 128, "f32": 32}  # Facts: 64 and 16 MACs per cycle


def kernel_plan(m, k, n, dtype):
    """An l0uop plan holding the one kernel C[m, n] = A[m, k] . B[k, n]."""
    cast = dtype != "f32"
    a, b, c = f"!l0uop.buf<{m}x{k}x{dtype}>", f"!l0uop.buf<{k}x{n}x{dtype}>", f"!l0uop.buf<{m}x{n}xf32>"
    size = {"f16": 2, "f32": 4}[dtype]
    load = (lambda v, p: f"    %{v}r = l0uop.load %{p} : {dtype}\n"
            f"    %{v} = l0uop.cast %{v}r : {dtype} to f32\n") if cast else \
           (lambda v, p: f"    %{v} = l0uop.load %{p} : f32\n")
    return f"""l0uop.plan @mm pipeline_depth 1 {{
  l0uop.pool @dev persistent on device capacity {2 * (m * k + k * n) * size + 4 * m * n + 4096}
  l0uop.slot @a pool @dev offset 0 size {m * k * size} lifetime(0, 0) : {a}
  l0uop.slot @b pool @dev offset {((m * k * size + 255) // 256) * 256} size {k * n * size} lifetime(0, 0) : {b}
  l0uop.slot @c pool @dev offset {((m * k * size + 255) // 256 + (k * n * size + 255) // 256) * 256} size {m * n * 4} lifetime(0, 0) : {c}
  l0uop.kernel @mm inputs(%a = @a : {a}, %b = @b : {b}) outputs(%c = @c : {c}) grid({m}, 1, 1) block({n}, 1, 1) shared_mem 0 {{
    %i = l0uop.range 0 to {m} over group_x : index
    %j = l0uop.range 0 to {n} over local_x : index
    %zero = l0uop.const 0.0 : f32
    %k = l0uop.range 0 to {k} : index
    %pa = l0uop.index %a[%i, %k] : {a}
{load("fa", "pa")}    %pb = l0uop.index %b[%k, %j] : {b}
{load("fb", "pb")}    %p = l0uop.mul %fa, %fb : f32
    l0uop.end %k
    %s = l0uop.reduce add %p over %k init %zero : f32
    %pc = l0uop.index %c[%i, %j] : {c}
    l0uop.store %pc, %s : f32
    l0uop.end %j
    l0uop.end %i
  }}
  l0uop.stream @s0 [@mm]
}}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    parser.add_argument("--shapes", default=DEFAULT)
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    tool = lambda name: os.path.join(bin_dir, name)
    print(f"{'M x K x N':>16} {'type':>4}  {'plan':<92} {'tiles':>5} {'cycles':>10} "
          f"{'us':>8} {'of peak':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for spec in args.shapes.split(","):
            dims, dtype = spec.split(":")
            m, k, n = map(int, dims.split("x"))
            plan = os.path.join(tmp, "plan.mlir")
            with open(plan, "w") as f:
                f.write(kernel_plan(m, k, n, dtype))
            graph, program = os.path.join(tmp, "graph.mlir"), os.path.join(tmp, "p.ipu")
            search = subprocess.run(
                [tool("synpl-opt"), plan, "--synpl-convert-l0uop-to-ipu21",
                 "--synpl-search-report=json", "-o", graph],
                check=True, capture_output=True, text=True).stderr
            winner = [json.loads(l) for l in search.splitlines() if l.startswith("{")][0]["top"][0]
            subprocess.run([tool("synpl-translate"), "--synpl-ipu21-to-program", graph, "-o", program],
                           check=True)
            report = json.loads(subprocess.run(
                [tool("synpl-ipu21-sim"), program, "--timing-only", "--report=json"],
                check=True, capture_output=True, text=True).stdout)
            tiles = next(t["value"] for t in winner["terms"] if t["name"] == "tiles")
            cycles = report["totalCycles"]
            peak = report["tiles"] * FLOP_PER_TILE_CYCLE[dtype]
            share = 2 * m * n * k / (cycles * peak)
            us = cycles / report["clockHz"] * 1e6
            print(f"{dims:>16} {dtype:>4}  {winner['candidate']:<92} {int(tiles):>5} "
                  f"{cycles:>10} {us:>8.1f} {share:>7.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
