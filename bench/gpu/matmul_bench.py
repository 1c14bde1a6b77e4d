#!/usr/bin/env python3
"""Benchmarks the emitted matmul kernels against cuBLAS on the GPU machine.

Runs with only what bench/gpu/build_matmul.sh wrote on the CPU machine
(<entry>.ptx + <entry>.json) and PyTorch with CUDA: the PTX is loaded with
the driver API through ctypes (cuModuleLoadData, cuModuleGetFunction,
cuLaunchKernel on torch tensors' data_ptr()), every result is checked
against torch.matmul in f32, and the kernel and cuBLAS (torch.matmul in the
kernel's dtypes; tf32 off for f32) are timed interleaved with CUDA events.

  python3 matmul_bench.py [--dir out] [--iters 20] [--reps 5] [--json out.json]

Prints one line per kernel (TFLOP/s of both and the ratio) and exits
non-zero when a result is wrong.
"""
import argparse
import ctypes
import glob
import json
import os
import statistics
import sys

import torch

DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")

    def check(self, rc, what):
        if rc != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(rc, ctypes.byref(name))
            raise RuntimeError(f"{what}: {name.value.decode() if name.value else rc}")

    def load(self, ptx, entry, shared):
        module = ctypes.c_void_p()
        data = ctypes.create_string_buffer(ptx.encode() + b"\0")
        # The JIT's error log (CU_JIT_ERROR_LOG_BUFFER = 5, its size = 6), so
        # a PTX the driver rejects says why.
        log = ctypes.create_string_buffer(8192)
        options = (ctypes.c_int * 2)(5, 6)
        values = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p), ctypes.c_void_p(len(log)))
        rc = self.lib.cuModuleLoadDataEx(ctypes.byref(module), data, 2, options, values)
        if rc != 0:
            self.check(rc, "cuModuleLoadDataEx " + entry + ": " +
                       log.value.decode(errors="replace").strip())
        func = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(func), module, entry.encode()),
                   "cuModuleGetFunction " + entry)
        if shared > 48 * 1024:
            self.check(self.lib.cuFuncSetAttribute(
                func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, ctypes.c_int(shared)),
                "cuFuncSetAttribute")
        return func

    def launch(self, func, grid, block, shared, tensors):
        ptrs = [ctypes.c_void_p(t.data_ptr()) for t in tensors]
        params = (ctypes.c_void_p * len(ptrs))(*[ctypes.addressof(p) for p in ptrs])
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.check(self.lib.cuLaunchKernel(
            func, ctypes.c_uint(grid[0]), ctypes.c_uint(grid[1]), ctypes.c_uint(grid[2]),
            ctypes.c_uint(block[0]), ctypes.c_uint(block[1]), ctypes.c_uint(block[2]),
            ctypes.c_uint(shared), stream, params, None), "cuLaunchKernel")


def time_ms(fn, iters):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def bench(driver, desc, ptx, args):
    bufs = desc["buffers"]
    ins = [b for b in bufs if b["role"] == "input"]
    outs = [b for b in bufs if b["role"] == "output"]
    if len(ins) != 2 or len(outs) != 1 or any(len(b["shape"]) != 2 for b in bufs):
        print(f"{desc['entry']}: not a plain A.B matmul, skipped")
        return None
    (m, k), (k2, n) = ins[0]["shape"], ins[1]["shape"]
    if k != k2 or outs[0]["shape"] != [m, n]:
        print(f"{desc['entry']}: shapes are not A[MxK] . B[KxN], skipped")
        return None
    torch.manual_seed(0)
    a = torch.randn(m, k, device="cuda").to(DTYPES[ins[0]["dtype"]])
    b = torch.randn(k, n, device="cuda").to(DTYPES[ins[1]["dtype"]])
    out_dtype = DTYPES[outs[0]["dtype"]]
    c = torch.full((m, n), float("nan"), device="cuda", dtype=out_dtype)
    func = driver.load(ptx, desc["entry"], desc["shared_bytes"])
    run = lambda: driver.launch(func, desc["grid"], desc["block"], desc["shared_bytes"], [a, b, c])
    run()
    torch.cuda.synchronize()
    ref = torch.matmul(a.double(), b.double())
    err = (c.double() - ref).abs().max().item()
    scale = ref.abs().max().item()
    # bf16/f16 output: ~2^-8 / 2^-11 relative rounding of the result plus f32
    # accumulation order; f32: accumulation order over K.
    tol = {torch.bfloat16: 1e-2, torch.float16: 2e-3, torch.float32: 1e-4}[out_dtype] * scale
    ok = err <= tol and not torch.isnan(c).any().item()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    cublas = lambda: torch.matmul(a, b, out=c_ref)
    c_ref = torch.empty((m, n), device="cuda", dtype=a.dtype)
    ours_ms, theirs_ms = [], []
    for _ in range(2):  # warm-up
        run(); cublas()
    for _ in range(args.reps):
        ours_ms.append(time_ms(run, args.iters))
        theirs_ms.append(time_ms(cublas, args.iters))
    flops = 2.0 * m * n * k
    ours, theirs = statistics.median(ours_ms), statistics.median(theirs_ms)
    res = {
        "kernel": desc["kernel"], "entry": desc["entry"], "rank": desc.get("rank", 0),
        "shape": [m, n, k],
        "dtype": ins[0]["dtype"], "out_dtype": outs[0]["dtype"],
        "config": desc["description"], "correct": ok, "max_abs_err": err, "tolerance": tol,
        "ours_ms": ours, "cublas_ms": theirs,
        "ours_tflops": flops / ours / 1e9, "cublas_tflops": flops / theirs / 1e9,
        "ratio": theirs / ours,
    }
    print(f"{desc['entry']}: {m}x{n}x{k} {res['dtype']}->{res['out_dtype']}: "
          f"{'OK' if ok else 'WRONG'} (max err {err:.3g}, tol {tol:.3g}); "
          f"emitted {res['ours_tflops']:.1f} TFLOP/s, cuBLAS {res['cublas_tflops']:.1f} TFLOP/s, "
          f"ratio {100 * res['ratio']:.1f}%  [{desc['description']}]")
    return res


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", default=os.path.join(os.path.dirname(__file__), "out"))
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # makes the primary context current
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    driver = Driver()
    results, wrong = [], False
    for path in sorted(glob.glob(os.path.join(args.dir, "*.json"))):
        with open(path) as f:
            desc = json.load(f)
        if not isinstance(desc, dict) or not {"entry", "ptx", "buffers"} <= desc.keys():
            continue  # not a kernel description of build_matmul.sh
        with open(os.path.join(args.dir, desc["ptx"])) as f:
            ptx = f.read()
        res = bench(driver, desc, ptx, args)
        if res:
            results.append(res)
            wrong |= not res["correct"]
    # The compiler's choice (rank 0) per kernel, and the best ranked variant.
    for kernel in sorted({r["kernel"] for r in results}):
        rs = [r for r in results if r["kernel"] == kernel and r["correct"]]
        chosen = [r for r in rs if r["rank"] == 0]
        if not rs:
            continue
        best = max(rs, key=lambda r: r["ours_tflops"])
        line = f"summary {kernel}: "
        if chosen:
            line += (f"emitted (model's choice) {chosen[0]['ours_tflops']:.1f} TFLOP/s = "
                     f"{100 * chosen[0]['ratio']:.1f}% of cuBLAS; ")
        line += (f"best ranked variant r{best['rank']} {best['ours_tflops']:.1f} TFLOP/s = "
                 f"{100 * best['ratio']:.1f}% [{best['config']}]")
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "results": results}, f, indent=2)
    return 1 if wrong or not results else 0


if __name__ == "__main__":
    sys.exit(main())
