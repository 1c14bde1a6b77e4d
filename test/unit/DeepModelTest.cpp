//===- DeepModelTest.cpp - Whole models lower and step like the reference ===//
//
// Kernels whose operand lists grow with the model (the L1 penalty over every
// parameter, the optimizer's update of every state field) must stay within
// the buffers a kernel may bind (SYNPL_PLAN_MAX_KERNEL_ARGS). A spec with
// 100 repeated `linear, norm(layer), gelu` blocks goes through the L3 -> L2
// and L2 -> L1 searches and --synpl-l1-to-l0; one training step of its plan
// runs in the plain UOp evaluator (test/unit/UOpEvaluator.h) and every
// state field after the update (parameters and Adam moments, which are
// linear in the gradients) must match the reference interpreter's. The
// same check runs a small convolutional network
// (test/unit/Inputs/small_cnn.syn): its windows, pooling and the
// convolution's gradient rows, which a copy kernel stores before their
// matmuls read them.
//
//===----------------------------------------------------------------------===//
#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Frontend/Syn.h"
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"
#include "synpl/Runtime/PlanFormat.h"

#include "TestContext.h"
#include "UOpEvaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "llvm/ADT/StringSet.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>

using namespace mlir;
using namespace synpl;
using synpl::ref::ElementType;
using synpl::ref::Tensor;
using synpl::test::UOpEvaluator;

namespace {

constexpr int kBlocks = 100;

std::string deepSpec() {
  std::string blocks;
  for (int i = 0; i < kBlocks; ++i)
    blocks += "        linear(16, 16), norm(layer), gelu,\n";
  return R"(
data mnist {
    images : tensor(f32, [28, 28])
    labels : tensor(u8, [1])
}
model classify {
    in:  mnist.images
    out: dist(10)
}
loss objective {
    ce:     divergence(classify.out, mnist.labels), weight: 1.0
    sparse: norm(classify.params, p=1),             weight: 1e-3
    combine: weighted_sum
}
goal: minimize(objective)
methods for classify {
    sample:   epoch_shuffle(batch: 4, drop_last: true)
    infer: sequential [
        flatten, linear(784, 16), gelu,
)" + blocks +
         R"(        linear(16, 10), softmax
    ]
    backward: autodiff(mode: reverse)
    update:   adam(lr: 1e-2)
}
)";
}

const char *kSystem = R"mlir(
l1.system @one_cpu {
  l1.node @ssd_0 storage
  l1.node @ram_0 memory {capacity = "16GB"}
  l1.node @cpu_0 compute {isa = "x86_64", cores = 2}
  l1.edge @ssd_0 -> @ram_0 bandwidth "2GB/s"
  l1.edge @ram_0 <-> @cpu_0 bandwidth "50GB/s"
}
)mlir";

using synpl::test::runPipeline;

} // namespace

/// Lowers `spec` through both searches and L1 -> L0, runs one step of the
/// plan in the UOp evaluator and checks every state field against the
/// reference; returns the plan's facts the callers check.
struct StepFacts {
  size_t fields = 0, kernels = 0, widest = 0, storedViews = 0;
  /// The update handler's kernels, and the distinct buffers they bind.
  size_t updateKernels = 0, updateBuffers = 0;
};
static StepFacts checkOneStep(const std::string &spec) {
  StepFacts facts;
  synpl::registerAllPasses();
  auto ctx = synpl::test::makeContext();
  std::string errors;
  ScopedDiagnosticHandler handler(ctx.get(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error)
      errors += d.str() + "\n";
    return success();
  });

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(spec, "model.syn"),
                               llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSyn(sourceMgr, ctx.get());
  INFO(errors);
  REQUIRE(module);
  REQUIRE(succeeded(runPipeline(*module, "synpl-l3-to-l2")));
  OwningOpRef<ModuleOp> system = parseSourceString<ModuleOp>(kSystem, ctx.get());
  REQUIRE(system);
  module->getBody()->push_front((*system->getOps<l1::SystemOp>().begin())->clone());
  REQUIRE(succeeded(runPipeline(*module, "synpl-l2-to-l1")));
  // The reference reads the L1 program; lowering replaces it.
  OwningOpRef<ModuleOp> l1 = module->clone();

  auto actor = *l1->getOps<l1::ActorOp>().begin();
  auto graph = *l1->getOps<l1::TensorGraphOp>().begin();
  auto update = *actor.getOps<l1::HandlerOp>().begin();
  std::string actorName = actor.getSymName().str();
  ref::StateEnv state;
  REQUIRE(succeeded(ref::initializeActorState(actor, 11, state)));
  std::vector<std::string> fields;
  std::mt19937 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (auto field : actor.getOps<l1::StateOp>()) {
    std::string f = field.getSymName().str();
    fields.push_back(f);
    // Adam's moments and step mid-training, so that the update depends on
    // every gradient's value (at step 1 it is nearly lr * sign(g)).
    Tensor t = *state.lookup(actorName, f);
    StringRef name(f);
    for (double &v : t.data()) {
      if (name.starts_with("m_"))
        v = static_cast<float>(1e-3 * normal(rng));
      else if (name.starts_with("v_"))
        v = static_cast<float>(1e-6 * (1.0 + std::abs(normal(rng))));
      else if (name == "step")
        v = 50;
    }
    state.set(actorName, f, t);
  }
  facts.fields = fields.size();

  auto inTypes = graph.getBody().front().getArgumentTypes();
  REQUIRE(inTypes.size() == 2);
  Tensor images(ElementType::f32(), cast<RankedTensorType>(inTypes[0]).getShape());
  Tensor labels(ElementType::ui8(), cast<RankedTensorType>(inTypes[1]).getShape());
  std::uniform_int_distribution<int> label(0, 9);
  for (double &v : images.data())
    v = static_cast<float>(std::abs(normal(rng)));
  for (double &v : labels.data())
    v = label(rng);

  ref::StateEnv before = state;
  auto outs = ref::interpretTensorGraph(graph, {images, labels}, state);
  INFO(errors);
  REQUIRE(succeeded(outs));
  unsigned grads = update.getBody().front().getNumArguments();
  REQUIRE(outs->size() >= grads + 1);
  REQUIRE(succeeded(
      ref::interpretHandler(update, ArrayRef<Tensor>(*outs).slice(1, grads), state)));

  // Lower and check the limit the verifier enforces.
  PassManager pm(ctx.get());
  pm.addPass(createL1ToL0());
  INFO(errors);
  REQUIRE(succeeded(pm.run(*module)));
  auto plan = *module->getOps<l0uop::PlanOp>().begin();
  REQUIRE(succeeded(verify(plan)));
  Block &items = plan.getBody().front();
  size_t widest = 0, kernels = 0;
  std::string updatePrefix =
      (update->getParentOfType<l1::ActorOp>().getSymName() + "." + update.getSymName() + ".")
          .str();
  llvm::StringSet<> updateBuffers;
  for (auto kernel : items.getOps<l0uop::KernelOp>()) {
    widest = std::max(widest, kernel.getInputs().size() + kernel.getOutputs().size());
    ++kernels;
    if (!kernel.getSymName().starts_with(updatePrefix))
      continue;
    ++facts.updateKernels;
    Block &body = kernel.getBody().front();
    for (unsigned a = 0; a < kernel.getInputs().size() + kernel.getOutputs().size(); ++a)
      updateBuffers.insert(kernel.getSlotOf(body.getArgument(a)).getValue());
  }
  facts.kernels = kernels;
  facts.widest = widest;
  facts.updateBuffers = updateBuffers.size();
  for (auto slot : items.getOps<l0uop::SlotOp>())
    facts.storedViews += slot.getSymName().contains(".view");

  // One step in the UOp evaluator: state and batch in, stream 0 in order.
  UOpEvaluator eval;
  for (auto slot : items.getOps<l0uop::SlotOp>())
    eval.memory[slot.getSymName().str()].assign(slot.getBufType().getNumElements(), 0.0);
  for (const std::string &f : fields)
    eval.memory[actorName + "." + f] = before.lookup(actorName, f)->data();
  auto ingest = *items.getOps<l0uop::IngestOp>().begin();
  REQUIRE(ingest.getSlots().size() == 2);
  eval.memory[cast<FlatSymbolRefAttr>(ingest.getSlots()[0]).getValue().str()] = images.data();
  eval.memory[cast<FlatSymbolRefAttr>(ingest.getSlots()[1]).getValue().str()] = labels.data();
  auto stream = *items.getOps<l0uop::StreamOp>().begin();
  for (Attribute e : stream.getEntries()) {
    StringRef name = cast<FlatSymbolRefAttr>(e).getValue();
    if (auto kernel = plan.lookup<l0uop::KernelOp>(name))
      eval.run(kernel);
    else if (auto tx = plan.lookup<l0uop::TransferOp>(name))
      eval.memory[tx.getDst().str()] = eval.memory[tx.getSrc().str()];
  }
  CHECK(eval.outOfBounds == 0);

  // Every state field after the update. The evaluator computes in double
  // like the reference; the kernels' constants are f32 (~1e-7 relative).
  int mismatched = 0;
  for (const std::string &f : fields) {
    const Tensor &want = *state.lookup(actorName, f);
    Tensor got(want.getElementType(), want.getShape(), eval.memory[actorName + "." + f]);
    ref::Comparison c = ref::compare(got, want, 1e-5, 1e-7);
    if (!c.ok && mismatched++ < 5)
      UNSCOPED_INFO(f << ": " << c.message);
  }
  CHECK(mismatched == 0);
  return facts;
}

TEST_CASE("a 100-block MLP lowers within the kernel argument limit and one step matches "
          "the reference",
          "[l1tol0][deep]") {
  StepFacts facts = checkOneStep(deepSpec());
  // Four parameters per block (weight, bias, layer norm's gain and shift),
  // each with Adam's two moments.
  CHECK(facts.fields > 3 * 4 * kBlocks);
  INFO(facts.kernels << " kernels, the widest binds " << facts.widest << " buffers; the "
                     << facts.updateKernels << " of the update bind " << facts.updateBuffers);
  CHECK(facts.widest <= SYNPL_PLAN_MAX_KERNEL_ARGS);
  // The update touches ~2,000 buffers, more than one kernel may bind: it
  // must have been split among kernels (and the state matches the
  // reference above: nothing was dropped).
  CHECK(facts.updateBuffers > SYNPL_PLAN_MAX_KERNEL_ARGS);
  CHECK(facts.updateKernels > 1);
}

TEST_CASE("a small CNN lowers and one step matches the reference", "[l1tol0][conv]") {
  auto buffer = llvm::MemoryBuffer::getFile(SYNPL_SOURCE_DIR "/test/unit/Inputs/small_cnn.syn");
  REQUIRE(buffer);
  StepFacts facts = checkOneStep((*buffer)->getBuffer().str());
  CHECK(facts.fields > 0);
  // The convolutions' gradient rows (a reshape of a transpose) are stored
  // by copy kernels before the weight and input gradient matmuls.
  CHECK(facts.storedViews >= 2);
}
