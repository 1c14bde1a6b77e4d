//===- SgemmBench.cpp - The emitted matmul kernel against OpenBLAS --------===//
//
// Builds an l0uop matmul kernel the way L1ToL0 emits one for `l1.matmul`
// (RANGE i over group_x, RANGE j over local_x, a REDUCE add over RANGE k of
// load a[i, k] * load b[k, j], a store of c[i, j]), lowers it with
// --synpl-convert-l0uop-to-llvm, JIT-compiles it for the host, and times it
// against OpenBLAS's cblas_sgemm (dlopen'ed: libopenblas.so.0) at the same
// sizes, runs interleaved, median of several:
//
//   * one thread: the kernel called on its whole split range [0, M);
//     OpenBLAS with openblas_set_num_threads(1);
//   * two threads: the kernel's split range chunked as the executor
//     chunks it on a pool of two (one chunk per thread when the kernel
//     has a grain: its chunks pack an operand); OpenBLAS with two threads.
//
// Prints GFLOP/s (2·M·N·K per call) for both, the ratio synpl / OpenBLAS
// (the median of each round's own ratio, and their quartiles), and the
// largest relative difference between the two results (against a
// double loop when OpenBLAS is missing and the size is small); exits 1 when
// that exceeds 1e-3. It asserts nothing about time.
//
// Usage: synpl-bench-sgemm [--runs R] [--min-ms T] [--tile-lanes L]
//                          [--tile-rows R] [--dump-object PREFIX] [MxNxK ...]
//        (default sizes 128x256x784 and 1024x1024x1024)
//        --dump-object: writes each size's compiled kernel to
//        PREFIX-MxNxK.o and prints where it sits in the process, so that
//        `perf record` samples (addresses in JIT code, no symbols) map onto
//        `objdump -d` of the object at their offset from that address.
//        synpl-bench-sgemm --kernels PROGRAM.l1.mlir [--runs R] [--min-ms T]
//
// --kernels: the per-kernel effect on a real program. Runs the first half
// of the host pipeline on the L1 program (what `synplc --emit=l0` runs:
// the host L1 rewrites, emission, memory packing; so the kernels and their
// names are the executable's, as --profile lists them), lowers its kernels twice
// (tile-lanes=0: the untiled lowering; and the default), and times, one
// thread, every kernel that the tiled lowering took (a vector fma in its
// function), both ways: f32 buffers hold random values, the others zeros.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/InitAll.h"
#include "synpl/Pipelines/Pipelines.h"
#include "synpl/Runtime/Runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using KernelFn = void (*)(float *, float *, float *, int64_t, int64_t);

/// The kernel L1ToL0 emits for c = a · b (a: MxK, b: KxN, row-major).
std::string matmulKernel(int64_t m, int64_t n, int64_t k) {
  auto buf = [](int64_t r, int64_t c) {
    return "!l0uop.buf<" + std::to_string(r) + "x" + std::to_string(c) +
           "xf32>";
  };
  auto bytes = [](int64_t r, int64_t c) { return (r * c * 4 + 255) / 256 * 256; };
  int64_t oa = 0, ob = oa + bytes(m, k), oc = ob + bytes(k, n),
          total = oc + bytes(m, n);
  std::string a = buf(m, k), b = buf(k, n), c = buf(m, n);
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "l0uop.plan @bench pipeline_depth 1 {\n"
     << "  l0uop.pool @dev persistent on device capacity " << total << "\n"
     << "  l0uop.slot @a pool @dev offset " << oa << " size " << bytes(m, k)
     << " lifetime(0, 0) : " << a << "\n"
     << "  l0uop.slot @b pool @dev offset " << ob << " size " << bytes(k, n)
     << " lifetime(0, 0) : " << b << "\n"
     << "  l0uop.slot @c pool @dev offset " << oc << " size " << bytes(m, n)
     << " lifetime(0, 0) : " << c << "\n"
     << "  l0uop.kernel @matmul inputs(%a = @a : " << a << ", %b = @b : " << b
     << ") outputs(%c = @c : " << c << ") grid(" << m << ", 1, 1) block("
     << n << ", 1, 1) shared_mem 0 {\n"
     << "    %i = l0uop.range 0 to " << m << " over group_x : index\n"
     << "    %j = l0uop.range 0 to " << n << " over local_x : index\n"
     << "    %zero = l0uop.const 0.0 : f32\n"
     << "    %k = l0uop.range 0 to " << k << " : index\n"
     << "    %pa = l0uop.index %a[%i, %k] : " << a << "\n"
     << "    %va = l0uop.load %pa : f32\n"
     << "    %pb = l0uop.index %b[%k, %j] : " << b << "\n"
     << "    %vb = l0uop.load %pb : f32\n"
     << "    %p = l0uop.mul %va, %vb : f32\n"
     << "    l0uop.end %k\n"
     << "    %s = l0uop.reduce add %p over %k init %zero : f32\n"
     << "    %pc = l0uop.index %c[%i, %j] : " << c << "\n"
     << "    l0uop.store %pc, %s : f32\n"
     << "    l0uop.end %j\n"
     << "    l0uop.end %i\n"
     << "  }\n"
     << "}\n";
  return s;
}

/// OpenBLAS through dlopen, so that building needs no -dev package.
struct OpenBlas {
  using Sgemm = void (*)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
  using SetThreads = void (*)(int);
  Sgemm sgemm = nullptr;
  SetThreads setThreads = nullptr;
  bool load() {
    for (const char *name : {"libopenblas.so.0", "libopenblas.so"}) {
      void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (!h)
        continue;
      sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
      setThreads = reinterpret_cast<SetThreads>(
          dlsym(h, "openblas_set_num_threads"));
      if (sgemm && setThreads)
        return true;
    }
    return false;
  }
  void run(int m, int n, int k, const float *a, const float *b, float *c) {
    // CblasRowMajor = 101, CblasNoTrans = 111.
    sgemm(101, 111, 111, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
  }
};

struct Chunked {
  KernelFn fn;
  float *a, *b, *c;
};
void runChunk(void *ctx, int64_t begin, int64_t end) {
  auto *k = static_cast<Chunked *>(ctx);
  k->fn(k->a, k->b, k->c, begin, end);
}

float *alignedFloats(size_t n) {
  size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  return static_cast<float *>(std::aligned_alloc(64, bytes));
}

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Seconds per call of f: repeated until minSeconds have passed.
template <typename F>
double timeIt(F &&f, double minSeconds) {
  f(); // warm
  int calls = 0;
  double start = seconds(), now = start;
  do {
    f();
    ++calls;
    now = seconds();
  } while (now - start < minSeconds);
  return (now - start) / calls;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// The q-quantile of `v` (0 <= q <= 1), by the nearest rank.
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

/// Binds the runtime's kernel scratch (tiled kernels take their large
/// arrays from it) by name: this binary does not export its symbols.
void bindRuntime(mlir::ExecutionEngine &engine) {
  engine.registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap map;
    map[interner("synpl_rt_kernel_scratch")] = {
        llvm::orc::ExecutorAddr::fromPtr(&synpl_rt_kernel_scratch),
        llvm::JITSymbolFlags::Exported};
    return map;
  });
}

/// A JIT of `module` lowered with the given tile-lanes.
std::unique_ptr<mlir::ExecutionEngine>
lowerAndJit(mlir::ModuleOp source, unsigned tileLanes, mlir::ModuleOp *kept) {
  mlir::OwningOpRef<mlir::ModuleOp> module = source.clone();
  mlir::PassManager pm(source.getContext());
  synpl::ConvertL0UOpToLLVMOptions options;
  options.tileLanes = tileLanes;
  pm.addPass(synpl::createConvertL0UOpToLLVM(options));
  if (mlir::failed(pm.run(*module)))
    return nullptr;
  // The plan and the control programs stay out of the JIT.
  for (mlir::Operation &op :
       llvm::make_early_inc_range(module->getBody()->getOperations()))
    if (mlir::isa<synpl::l0uop::PlanOp>(op) ||
        mlir::isa<synpl::l0ctl::L0CtlDialect>(op.getDialect()))
      op.erase();
  if (kept)
    *kept = mlir::cast<mlir::ModuleOp>(module->getOperation()->clone());
  auto optimize = mlir::makeOptimizingTransformer(3, 0, nullptr);
  mlir::ExecutionEngineOptions engineOptions;
  engineOptions.transformer = optimize;
  auto engine = mlir::ExecutionEngine::create(*module, engineOptions);
  if (!engine) {
    llvm::consumeError(engine.takeError());
    return nullptr;
  }
  bindRuntime(**engine);
  return std::move(*engine);
}

int benchKernels(mlir::MLIRContext &ctx, const std::string &path, int runs,
                 double minSeconds) {
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(path, &ctx);
  if (!module)
    return 1;
  mlir::PassManager pm(&ctx);
  synpl::buildHostEmissionPipeline(pm, synpl::HostPipelineOptions());
  if (mlir::failed(pm.run(*module))) {
    std::fprintf(stderr, "the host pipeline's L1 -> L0 half failed on %s\n", path.c_str());
    return 1;
  }
  struct Kernel {
    std::string name;
    std::vector<size_t> sizes; // elements per buffer argument
    std::vector<size_t> bytes; // bytes per element (an i1 mask: one)
    std::vector<bool> f32;
  };
  std::vector<Kernel> kernels;
  module->walk([&](synpl::l0uop::KernelOp kernel) {
    auto plan = kernel->getParentOfType<synpl::l0uop::PlanOp>();
    if (!plan)
      return;
    Kernel k;
    k.name = (plan.getSymName() + "_" + kernel.getSymName()).str();
    unsigned n = kernel.getNumInputs() + kernel.getNumOutputs();
    for (unsigned a = 0; a < n; ++a) {
      auto buf = mlir::cast<synpl::l0uop::BufType>(
          kernel.getBody().front().getArgument(a).getType());
      k.sizes.push_back(buf.getNumElements());
      unsigned bits = buf.getElementType().getIntOrFloatBitWidth();
      k.bytes.push_back(std::max(1u, bits / 8));
      k.f32.push_back(buf.getElementType().isF32());
    }
    kernels.push_back(std::move(k));
  });
  mlir::ModuleOp tiledModule;
  auto untiled = lowerAndJit(*module, 0, nullptr);
  auto tiled = lowerAndJit(*module, 16, &tiledModule);
  if (!untiled || !tiled) {
    std::fprintf(stderr, "lowering or JIT failed\n");
    return 1;
  }
  std::printf("%-48s %10s %12s %12s %8s\n", "kernel (1 thread)", "iterations",
              "untiled ms", "tiled ms", "speedup");
  double totalUntiled = 0, totalTiled = 0;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Kernel &k : kernels) {
    auto fn = tiledModule.lookupSymbol<mlir::LLVM::LLVMFuncOp>(k.name);
    if (!fn)
      continue;
    bool vectorFma = false;
    fn.walk([&](mlir::LLVM::FMAOp fma) {
      vectorFma |= mlir::isa<mlir::VectorType>(fma.getType());
    });
    if (!vectorFma)
      continue;
    int64_t iterations =
        fn->getAttrOfType<mlir::IntegerAttr>("synpl.iterations").getInt();
    // f32 buffers random, the others zero (in range as indices; masks
    // false).
    std::vector<float *> bufs;
    for (size_t b = 0; b < k.sizes.size(); ++b) {
      size_t n = k.sizes[b];
      size_t words = (n * k.bytes[b] + 3) / 4;
      bufs.push_back(alignedFloats(words ? words : 1));
      if (k.f32[b])
        for (size_t i = 0; i < n; ++i)
          bufs.back()[i] = dist(rng);
      else
        std::memset(bufs.back(), 0, words * 4);
    }
    auto a = untiled->lookupPacked(k.name), b = tiled->lookupPacked(k.name);
    if (!a || !b) {
      llvm::consumeError(a.takeError());
      llvm::consumeError(b.takeError());
      continue;
    }
    int64_t begin = 0, end = iterations;
    std::vector<void *> args;
    for (float *&p : bufs)
      args.push_back(&p);
    args.push_back(&begin);
    args.push_back(&end);
    std::vector<double> ta, tb;
    for (int r = 0; r < runs; ++r) {
      ta.push_back(timeIt([&] { (*a)(args.data()); }, minSeconds));
      tb.push_back(timeIt([&] { (*b)(args.data()); }, minSeconds));
    }
    double ma = median(ta) * 1e3, mb = median(tb) * 1e3;
    totalUntiled += ma;
    totalTiled += mb;
    std::printf("%-48s %10lld %12.3f %12.3f %8.1f\n", k.name.c_str(),
                (long long)iterations, ma, mb, ma / mb);
    for (float *p : bufs)
      std::free(p);
  }
  std::printf("%-48s %10s %12.3f %12.3f %8.1f\n", "total", "", totalUntiled,
              totalTiled, totalTiled > 0 ? totalUntiled / totalTiled : 0.0);
  tiledModule->erase();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int runs = 5;
  double minSeconds = 0.2;
  std::vector<std::array<int64_t, 3>> sizes;
  std::string program, dumpPrefix;
  synpl::ConvertL0UOpToLLVMOptions defaults;
  unsigned tileLanes = defaults.tileLanes, tileRows = defaults.tileRows;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--kernels" && i + 1 < argc) {
      program = argv[++i];
    } else if (arg == "--tile-lanes" && i + 1 < argc) {
      tileLanes = std::atoi(argv[++i]);
    } else if (arg == "--tile-rows" && i + 1 < argc) {
      tileRows = std::atoi(argv[++i]);
    } else if (arg == "--dump-object" && i + 1 < argc) {
      dumpPrefix = argv[++i];
    } else if (arg == "--runs" && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--min-ms" && i + 1 < argc) {
      minSeconds = std::atof(argv[++i]) / 1000.0;
    } else {
      long long m, n, k;
      if (std::sscanf(arg.c_str(), "%lldx%lldx%lld", &m, &n, &k) != 3 ||
          m <= 0 || n <= 0 || k <= 0) {
        std::fprintf(stderr,
                     "usage: %s [--runs R] [--min-ms T] [--tile-lanes L] "
                     "[--tile-rows R] [--dump-object PREFIX] [MxNxK ...]\n"
                     "       %s --kernels PROGRAM.l1.mlir [--runs R] [--min-ms T]\n",
                     argv[0], argv[0]);
        return 2;
      }
      sizes.push_back({m, n, k});
    }
  }
  if (sizes.empty())
    sizes = {{128, 256, 784}, {1024, 1024, 1024}};

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  mlir::DialectRegistry registry;
  synpl::registerHostCodegen(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  if (!program.empty())
    return benchKernels(ctx, program, runs, minSeconds);

  OpenBlas blas;
  bool haveBlas = blas.load();
  if (!haveBlas)
    std::printf("OpenBLAS: libopenblas.so.0 not found (apt install "
                "libopenblas0-pthread); timing synplexum alone\n");
  synpl_rt_workers *two = synpl_rt_workers_create(2);
  bool mismatch = false;

  std::printf("%-16s %8s %12s %12s %8s %13s %10s\n", "M x N x K", "threads",
              "synpl GF/s", "OpenBLAS GF/s", "ratio", "ratio q1-q3", "max rel");
  for (const auto &size : sizes) {
    int64_t m = size[0], n = size[1], k = size[2];
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(matmulKernel(m, n, k), &ctx);
    if (!module) {
      std::fprintf(stderr, "the generated kernel does not parse\n");
      return 1;
    }
    mlir::PassManager pm(&ctx);
    synpl::ConvertL0UOpToLLVMOptions options;
    options.keepPlan = false;
    options.tileLanes = tileLanes;
    options.tileRows = tileRows;
    pm.addPass(synpl::createConvertL0UOpToLLVM(options));
    if (mlir::failed(pm.run(*module))) {
      std::fprintf(stderr, "--synpl-convert-l0uop-to-llvm failed\n");
      return 1;
    }
    // The executor's chunking: one chunk per thread for a kernel with a
    // grain (its chunks pack an operand), several otherwise.
    int64_t grain = 1;
    if (auto f = module->lookupSymbol<mlir::LLVM::LLVMFuncOp>("bench_matmul"))
      if (auto g = f->getAttrOfType<mlir::IntegerAttr>("synpl.grain"))
        grain = g.getInt();
    auto optimize = mlir::makeOptimizingTransformer(/*optLevel=*/3,
                                                    /*sizeLevel=*/0, nullptr);
    mlir::ExecutionEngineOptions engineOptions;
    engineOptions.transformer = optimize;
    engineOptions.enableObjectDump = !dumpPrefix.empty();
    auto engine = mlir::ExecutionEngine::create(*module, engineOptions);
    std::string dumpPath = dumpPrefix + "-" + std::to_string(m) + "x" +
                           std::to_string(n) + "x" + std::to_string(k) + ".o";
    if (engine)
      bindRuntime(**engine);
    if (engine && !dumpPrefix.empty())
      (*engine)->dumpToObjectFile(dumpPath);
    if (!engine) {
      std::fprintf(stderr, "JIT: %s\n",
                   llvm::toString(engine.takeError()).c_str());
      return 1;
    }
    auto sym = (*engine)->lookup("bench_matmul");
    if (!sym) {
      std::fprintf(stderr, "JIT: %s\n", llvm::toString(sym.takeError()).c_str());
      return 1;
    }
    auto fn = reinterpret_cast<KernelFn>(*sym);
    if (!dumpPrefix.empty())
      std::fprintf(stderr, "%s: bench_matmul at %p in this process\n",
                   dumpPath.c_str(), reinterpret_cast<void *>(*sym));

    float *a = alignedFloats(m * k), *b = alignedFloats(k * n),
          *c = alignedFloats(m * n), *ref = alignedFloats(m * n);
    std::mt19937 rng(42);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (int64_t i = 0; i < m * k; ++i)
      a[i] = dist(rng);
    for (int64_t i = 0; i < k * n; ++i)
      b[i] = dist(rng);
    // Without OpenBLAS, small sizes are checked against a double loop.
    bool naive = !haveBlas && m * n * k <= 100000000;
    if (naive)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t kk = 0; kk < k; ++kk)
            sum += static_cast<double>(a[i * k + kk]) * b[kk * n + j];
          ref[i * n + j] = static_cast<float>(sum);
        }
    double flops = 2.0 * m * n * k;
    char label[64];
    std::snprintf(label, sizeof label, "%lldx%lldx%lld", (long long)m,
                  (long long)n, (long long)k);

    for (int threads : {1, 2}) {
      Chunked chunked{fn, a, b, c};
      auto synplCall = [&] {
        if (threads == 1)
          fn(a, b, c, 0, m);
        else
          grain > 1 ? synpl_rt_parallel_for_grain(two, m, std::max(grain, (m + 1) / 2),
                                                  runChunk, &chunked)
                    : synpl_rt_parallel_for(two, m, runChunk, &chunked);
      };
      auto blasCall = [&] { blas.run(m, n, k, a, b, ref); };
      if (haveBlas)
        blas.setThreads(threads);
      std::vector<double> ours, theirs;
      for (int r = 0; r < runs; ++r) { // interleaved
        ours.push_back(timeIt(synplCall, minSeconds));
        if (haveBlas)
          theirs.push_back(timeIt(blasCall, minSeconds));
      }
      double gOurs = flops / median(ours) / 1e9;
      double maxRel = 0;
      for (int64_t i = 0; i < m * n; ++i)
        maxRel = std::max(maxRel, std::fabs((double)c[i] - ref[i]) /
                                      std::max(1.0, std::fabs((double)ref[i])));
      // Sums of k products of [-1, 1] values: float rounding stays far below.
      const char *verdict = (haveBlas || naive) ? (maxRel <= 1e-3 ? "" : "  MISMATCH") : "";
      if (*verdict)
        mismatch = true;
      char rel[32] = "-";
      if (haveBlas || naive)
        std::snprintf(rel, sizeof rel, "%.2e", maxRel);
      if (!haveBlas) {
        std::printf("%-16s %8d %12.2f %12s %8s %13s %10s%s\n", label, threads, gOurs,
                    "-", "-", "-", rel, verdict);
        continue;
      }
      double gTheirs = flops / median(theirs) / 1e9;
      // Each round's own ratio (the two calls ran back to back, under the
      // same load): the host's slow drifts cancel out of these.
      std::vector<double> paired;
      for (int r = 0; r < runs; ++r)
        paired.push_back(theirs[r] / ours[r]);
      char spread[32];
      std::snprintf(spread, sizeof spread, "%.3f-%.3f", quantile(paired, 0.25),
                    quantile(paired, 0.75));
      std::printf("%-16s %8d %12.2f %12.2f %8.3f %13s %10s%s\n", label, threads,
                  gOurs, gTheirs, median(paired), spread, rel, verdict);
    }
    std::free(a);
    std::free(b);
    std::free(c);
    std::free(ref);
  }
  synpl_rt_workers_destroy(two);
  return mismatch ? 1 : 0;
}
