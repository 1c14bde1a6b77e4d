//===- EndToEndJitTest.cpp - One MNIST step through the whole host chain ===//
//
// Compiles examples/mnist/mnist.l1.mlir as the driver does
// (--synpl-l1-to-l0-pipeline, --synpl-l0-pack-memory,
// --synpl-convert-l0uop-to-llvm with keep-plan), JIT-compiles the kernel
// functions of a copy of the result with the optimization synplc's object
// gets (synpl::host::optimizeForHost: float reassociation, O3, libmvec), and
// runs ONE training step the way the host runtime would, in the plan's
// memory as the runtime lays it out (PlanMemory.h: aligned pools, slots at
// their offsets, transient memory NaN); the first stream's entries run in order
// (kernels over [0, host_iterations), matmuls in two uneven chunks;
// transfers are memcpys between slots). The numbers are then compared with
// the reference interpreter (double precision) on the same state and batch:
// the loss, every gradient, and every state field after GradUpdate.
//
// Tolerance: ref::compare's |got - want| <= atol + rtol |want| with
// rtol 1e-4, atol 1e-5 (the kernels compute in f32, the reference in
// double).
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"
#include "synpl/Target/HostObject.h"

#include "HostJit.h"
#include "PlanMemory.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#ifndef SYNPL_SOURCE_DIR
#error "SYNPL_SOURCE_DIR must point at the source tree"
#endif

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;

namespace {

using synpl::test::PlanMemory;

/// Largest |actual - expected| and largest |expected| of a slot.
struct Errors {
  double maxAbs = 0, scale = 0;
  double relToScale() const { return scale > 0 ? maxAbs / scale : maxAbs; }
};
Errors errorsOf(const Tensor &actual, const Tensor &expected) {
  Errors e;
  for (int64_t i = 0; i < expected.size() && i < actual.size(); ++i) {
    e.maxAbs = std::max(e.maxAbs, std::fabs(actual[i] - expected[i]));
    e.scale = std::max(e.scale, std::fabs(expected[i]));
  }
  return e;
}

/// Rounds to f32 so that the kernels and the reference start from the
/// same numbers.
double f32(double v) { return static_cast<double>(static_cast<float>(v)); }

} // namespace

/// What differs between the two placements of the model.
struct Example {
  const char *path;        // under the source tree
  int transfers;           // plan transfers in one step
  const char *lossSlot;    // where the step leaves the reported loss...
  const char *correctSlot; // ...and the reported argmax hits
};

/// One step of `ex` compiled and JIT-run, against the reference.
static void runOneStep(const Example &ex) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  synpl::registerAllPasses();
  DialectRegistry registry;
  synpl::registerHostCodegen(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  std::string errors;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      errors += d.str() + "\n";
    return success();
  });

  // SYNPL_SOURCE_DIR is set on this file by test/unit/CMakeLists.txt.
  std::string path = std::string(SYNPL_SOURCE_DIR "/") + ex.path;
  // Two parses: compilation replaces the L1 ops the reference reads.
  OwningOpRef<ModuleOp> l1 = parseSourceFile<ModuleOp>(path, &ctx);
  OwningOpRef<ModuleOp> compiled = parseSourceFile<ModuleOp>(path, &ctx);
  INFO(path << "\n" << errors);
  REQUIRE(l1);
  REQUIRE(compiled);

  // --- Inputs: actor state and one batch, rounded to what the slots hold.
  auto actor = *l1->getOps<l1::ActorOp>().begin();
  auto graph = *l1->getOps<l1::TensorGraphOp>().begin();
  auto upd = *actor.getOps<l1::HandlerOp>().begin();
  REQUIRE(graph.getSymName() == "forward_backward");
  REQUIRE(upd.getSymName() == "GradUpdate");
  std::string actorName = actor.getSymName().str();
  std::mt19937 rng(2024);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> unit(-1.0, 1.0), pos(0.0, 1.0);
  ref::StateEnv state;
  std::vector<std::string> fields;
  for (auto field : actor.getOps<l1::StateOp>()) {
    std::string f = field.getSymName().str();
    fields.push_back(f);
    auto type = cast<RankedTensorType>(field.getType());
    Tensor t(ElementType::f32(), type.getShape());
    StringRef name(f);
    double fanIn = type.getRank() ? (double)type.getShape()[0] : 1.0;
    for (double &v : t.data()) {
      if (name.starts_with("m_"))
        v = 1e-3 * normal(rng);
      else if (name.starts_with("v_"))
        v = 1e-7 + 1e-5 * pos(rng); // small positive second moments
      else if (name == "step")
        v = 1200; // past the warmup, inside both programs' cosine (to 1404 and 4680)
      else if (name.starts_with("w"))
        v = std::sqrt(2.0 / fanIn) * normal(rng);
      else if (name.starts_with("g"))
        v = 1.0 + 0.2 * unit(rng);
      else // biases and shifts
        v = 0.1 * unit(rng);
      v = f32(v);
    }
    state.set(actorName, f, t);
  }
  REQUIRE(fields.size() == 31);
  auto inTypes = graph.getBody().front().getArgumentTypes();
  REQUIRE(inTypes.size() == 2);
  Tensor images(ElementType::ui8(), cast<RankedTensorType>(inTypes[0]).getShape());
  Tensor labels(ElementType::ui8(), cast<RankedTensorType>(inTypes[1]).getShape());
  std::uniform_int_distribution<int> pixel(0, 255), label(0, 9);
  for (double &v : images.data())
    v = pixel(rng);
  for (double &v : labels.data())
    v = label(rng);

  // --- Reference: the graph, then the handler with its gradients.
  ref::StateEnv before = state;
  auto outs = ref::interpretTensorGraph(graph, {images, labels}, state);
  INFO(errors);
  REQUIRE(succeeded(outs));
  // Outputs: the loss, the gradients in the handler's order, correct.
  REQUIRE(outs->size() == 12);
  const Tensor &correct = outs->back();
  REQUIRE(correct.getRank() == 0);
  // Random labels against an untrained model: some rows hit, most do not.
  INFO("reference correct " << correct[0]);
  CHECK(correct[0] > 0);
  CHECK(correct[0] < 64);
  CHECK(correct[0] == std::trunc(correct[0]));
  REQUIRE(succeeded(ref::interpretHandler(
      upd, ArrayRef<Tensor>(*outs).drop_front().drop_back(), state)));

  // --- Compile as the driver does, keeping the plan as data.
  {
    PassManager pm(&ctx);
    // The pipeline text is the module pass manager's contents (a
    // `builtin.module(...)` wrapper would nest it one module deeper).
    REQUIRE(succeeded(parsePassPipeline("synpl-l1-to-l0-pipeline,synpl-l0-pack-memory,"
                                        "synpl-convert-l0uop-to-llvm{keep-plan=true}",
                                        pm)));
    INFO(errors);
    REQUIRE(succeeded(pm.run(*compiled)));
  }
  auto plans = compiled->getOps<l0uop::PlanOp>();
  REQUIRE(std::distance(plans.begin(), plans.end()) == 1);
  l0uop::PlanOp plan = *plans.begin();

  // --- JIT a copy without the plan (and the control program inside it).
  OwningOpRef<ModuleOp> code = compiled->clone();
  for (Operation &op : llvm::make_early_inc_range(code->getBody()->getOperations()))
    if (isa<l0uop::PlanOp>(op) || isa<l0ctl::L0CtlDialect>(op.getDialect()))
      op.erase();
  // The optimization synplc's object gets (float reassociation, O3 with
  // glibc's libmvec for exp2/log2), so these numbers are the executable's.
  REQUIRE(!llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1"));
  auto machine = synpl::host::createHostTargetMachine();
  REQUIRE(static_cast<bool>(machine));
  // ExecutionEngineOptions::transformer is a function_ref: the callable
  // must outlive create().
  auto optimize = [&](llvm::Module *m) -> llvm::Error {
    return synpl::host::optimizeForHost(*m, **machine);
  };
  ExecutionEngineOptions options;
  options.transformer = optimize;
  auto created = ExecutionEngine::create(*code, options);
  std::string jitError;
  if (!created)
    jitError = llvm::toString(created.takeError());
  INFO(jitError);
  REQUIRE(jitError.empty());
  std::unique_ptr<ExecutionEngine> engine = std::move(*created);
  synpl::test::bindRuntime(*engine);

  // --- Memory, state and batch.
  PlanMemory mem(plan);
  for (const std::string &f : fields) {
    std::string slot = actorName + "." + f;
    INFO(slot);
    REQUIRE(mem.has(slot));
    REQUIRE(mem.write(slot, *before.lookup(actorName, f)));
  }
  REQUIRE(mem.has("load_data.images"));
  REQUIRE(mem.has("load_data.labels"));
  REQUIRE(mem.write("load_data.images", images));
  REQUIRE(mem.write("load_data.labels", labels));

  // --- The first stream's entries, resolved before the clock starts.
  struct Launch {
    std::string name;
    void (*fn)(void **) = nullptr;
    std::vector<void *> ptrs;
    int64_t iterations = 0;
    bool split = false;
    // Transfer:
    void *src = nullptr, *dst = nullptr;
    int64_t bytes = 0;
  };
  auto streams = plan.getBody().front().getOps<l0uop::StreamOp>();
  REQUIRE(!streams.empty());
  l0uop::StreamOp stream = *streams.begin();
  std::vector<Launch> launches;
  int kernels = 0, transfers = 0, splitKernels = 0;
  size_t firstHandler = 0; // index of the first GradUpdate kernel
  for (Attribute e : stream.getEntries()) {
    std::string name = cast<FlatSymbolRefAttr>(e).getValue().str();
    INFO("stream entry @" << name);
    Launch l;
    l.name = name;
    if (auto kernel = plan.lookup<l0uop::KernelOp>(name)) {
      auto entry = kernel->getAttrOfType<FlatSymbolRefAttr>("host_entry");
      auto iters = kernel->getAttrOfType<IntegerAttr>("host_iterations");
      REQUIRE(entry);
      REQUIRE(iters);
      auto fn = engine->lookupPacked(entry.getValue());
      if (!fn) {
        std::string msg = llvm::toString(fn.takeError());
        FAIL("no JIT'd function @" << entry.getValue().str() << ": " << msg);
      }
      l.fn = *fn;
      l.iterations = iters.getInt();
      for (Attribute s : kernel.getInputs())
        l.ptrs.push_back(mem.at(cast<FlatSymbolRefAttr>(s).getValue().str()));
      for (Attribute s : kernel.getOutputs())
        l.ptrs.push_back(mem.at(cast<FlatSymbolRefAttr>(s).getValue().str()));
      l.split = StringRef(name).contains("matmul") && l.iterations > 1;
      splitKernels += l.split;
      if (!firstHandler && StringRef(name).starts_with(actorName + ".GradUpdate."))
        firstHandler = launches.size();
      ++kernels;
    } else if (auto tx = plan.lookup<l0uop::TransferOp>(name)) {
      l.src = mem.at(tx.getSrc().str());
      l.dst = mem.at(tx.getDst().str());
      l.bytes = tx.getBytes();
      ++transfers;
    } else {
      FAIL("stream entry @" << name << " is neither a kernel nor a transfer");
    }
    launches.push_back(std::move(l));
  }
  REQUIRE(firstHandler > 0);
  CHECK(splitKernels >= 5);
  CHECK(transfers == ex.transfers);

  // Calls fn(ptrs..., begin, end) through the packed wrapper.
  auto call = [](const Launch &l, int64_t begin, int64_t end) {
    std::vector<void *> args;
    std::vector<void *> values = l.ptrs;
    for (void *&p : values)
      args.push_back(&p);
    args.push_back(&begin);
    args.push_back(&end);
    l.fn(args.data());
  };
  auto runEntries = [&](size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const Launch &l = launches[i];
      if (l.fn == nullptr) {
        std::memcpy(l.dst, l.src, l.bytes);
      } else if (l.split) {
        int64_t k = l.iterations / 3; // uneven, as a thread pool might cut it
        call(l, 0, k);
        call(l, k, l.iterations);
      } else {
        call(l, 0, l.iterations);
      }
    }
  };

  // Tolerances. Absolute: |got - want| <= 1e-5 + 1e-4 |want|. Small slots
  // (Adam's v ~ 1e-6, most gradients ~ 1e-3) would pass that by atol
  // alone, so each slot is also held to its own scale: atol 1e-5 x max|want|.
  const double rtol = 1e-4, atol = 1e-5, scaledAtol = 1e-5;
  std::string report;
  char line[256];
  auto checkSlot = [&](const std::string &slot, const Tensor &expected) {
    Tensor actual = mem.read(slot, expected);
    Errors e = errorsOf(actual, expected);
    ref::Comparison abs = ref::compare(actual, expected, rtol, atol);
    ref::Comparison scaled = ref::compare(actual, expected, rtol, scaledAtol * e.scale);
    std::snprintf(line, sizeof(line), "%-24s err %.1e |want| %.1e rel %.1e\n",
                  slot.c_str(), e.maxAbs, e.scale, e.relToScale());
    report += line;
    INFO(slot << ": " << abs.message);
    CHECK(abs.ok);
    INFO(slot << " against its scale " << e.scale << ": " << scaled.message);
    CHECK(scaled.ok);
  };

  auto t0 = std::chrono::steady_clock::now();
  runEntries(0, firstHandler);
  auto t1 = std::chrono::steady_clock::now();

  // Graph outputs, read before the handler runs: out0 is the loss, out1..
  // out10 the gradients in the handler's argument order, out11 correct.
  for (size_t i = 0; i < outs->size(); ++i) {
    std::string slot = "forward_backward.out" + std::to_string(i);
    INFO(slot);
    REQUIRE(mem.has(slot));
    checkSlot(slot, (*outs)[i]);
  }

  auto t2 = std::chrono::steady_clock::now();
  runEntries(firstHandler, launches.size());
  auto t3 = std::chrono::steady_clock::now();

  // The loss and correct are on the host at the end of the step, where the
  // stage reports them (moved there, or left where the graph wrote them).
  REQUIRE(mem.has(ex.lossSlot));
  checkSlot(ex.lossSlot, (*outs)[0]);
  REQUIRE(mem.has(ex.correctSlot));
  checkSlot(ex.correctSlot, correct);
  // Every state field after GradUpdate.
  for (const std::string &f : fields)
    checkSlot(actorName + "." + f, *state.lookup(actorName, f));
  // Each parameter's update (new - old, ~1e-4) against the reference's: the
  // parameters themselves (~0.1) would hide an update that is off by a few
  // percent. rtol 1e-3: the f32 subtraction of values ~1 keeps ~1e-7
  // absolute, ~1e-3 of the smallest updates.
  int params = 0;
  for (const std::string &f : fields) {
    StringRef name(f);
    if (name.starts_with("m_") || name.starts_with("v_") || name == "step")
      continue;
    ++params;
    const Tensor &old = *before.lookup(actorName, f);
    const Tensor &want = *state.lookup(actorName, f);
    Tensor got = mem.read(actorName + "." + f, want);
    Tensor dGot = old, dWant = old;
    for (int64_t i = 0; i < old.size(); ++i) {
      dGot[i] = got[i] - old[i];
      dWant[i] = want[i] - old[i];
    }
    Errors e = errorsOf(dGot, dWant);
    ref::Comparison c = ref::compare(dGot, dWant, 1e-3, 1e-3 * e.scale);
    std::snprintf(line, sizeof(line),
                  "d(%s)%*s err %.1e |want| %.1e rel %.1e\n",
                  f.c_str(), int(21 - f.size()), "", e.maxAbs, e.scale, e.relToScale());
    report += line;
    INFO("update of " << f << ": " << c.message);
    CHECK(c.ok);
    CHECK(e.scale > 0); // the step moved it
  }
  CHECK(params == 10);

  using ms = std::chrono::duration<double, std::milli>;
  WARN(ex.path << ": loss " << (*outs)[0][0] << ", correct " << correct[0] << "; " << kernels << " kernels (" << splitKernels
               << " split in two chunks), " << transfers << " transfers; JIT'd step: "
               << ms(t1 - t0).count() << " ms forward/backward + " << ms(t3 - t2).count()
               << " ms GradUpdate (one thread; rtol " << rtol << ", atol " << atol
               << ", and atol " << scaledAtol << " x max|want| per slot);\n"
               << "max |got - want|, max |want| and their ratio per slot (d: update):\n"
               << report);
}

TEST_CASE("MNIST: one step through L1 -> L0 -> pack -> LLVM JIT matches the reference",
          "[e2e][jit]") {
  // Batch in, loss and correct out: 4 transfers.
  runOneStep({"examples/mnist/mnist.l1.mlir", 4, "transfer_grads.tx0", "transfer_grads.tx1"});
}

TEST_CASE("Fashion-MNIST on the host: one step through L1 -> L0 -> pack -> LLVM JIT "
          "matches the reference",
          "[e2e][jit]") {
  // Everything in host memory: no transfers; the graph reads the batch from
  // its read_batch slots, and the stage reports the graph's own outputs.
  runOneStep({"examples/fashion_mnist/fashion_mnist.l1.mlir", 0, "forward_backward.out0",
              "forward_backward.out11"});
}
