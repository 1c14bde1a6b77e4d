//===- synpl-interp.cpp - Run l1 tensor code on the reference interpreter --===//
//
//   synpl-interp prog.mlir --graph=forward_backward --init-seed=0 \
//       --arg='dense<7> : tensor<128x28x28xui8>' --arg='dense<3> : tensor<128x1xui8>'
//   synpl-interp prog.mlir --handler=model_state::GradUpdate --state=model_state::w=...
//   synpl-interp prog.l1.mlir --train --data DIR --epochs 2 --steps 20 [--eval]
//       [--metrics FILE]
//
// Arguments and state values are MLIR dense attributes. `--init-seed`
// initializes every actor's state from its `init` kinds first; `--state`
// overrides single fields. A graph prints its results, a handler the state of
// its actor afterwards. Failures print located diagnostics and exit 1.
// --train runs the program's training loop as a compiled program's runtime
// does, every step interpreted, and prints its epoch lines (Train.cpp).
//
//===----------------------------------------------------------------------===//
#include "Train.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/InitAll.h"
#include "synpl/Reference/L1Interpreter.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

using namespace mlir;
using namespace synpl;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::init("-"));
static cl::opt<std::string> graphName("graph", cl::desc("tensor graph to run"));
static cl::opt<std::string> handlerName("handler",
                                        cl::desc("handler to run, as actor::handler"));
static cl::list<std::string> args("arg", cl::desc("an argument (a dense attribute)"));
static cl::list<std::string> states("state",
                                    cl::desc("actor::field=<dense attribute> state value"));
static cl::opt<long long> initSeed("init-seed", cl::desc("initialize all actor state"),
                                   cl::init(-1));
static cl::opt<bool> noVerify("no-verify",
                              cl::desc("skip the program verifier (for fragments)"));
static cl::opt<bool> trainRun("train",
                              cl::desc("run the program's training loop (as its compiled "
                                       "runtime would) and print its epoch lines"));
static cl::opt<std::string> dataDir("data", cl::desc("--train: read the data files by name "
                                                     "in this folder"));
static cl::opt<long long> epochs("epochs", cl::desc("--train: epochs (default: the "
                                                    "schedule's, else 1)"),
                                 cl::init(0));
static cl::opt<long long> steps("steps", cl::desc("--train: at most this many steps per "
                                                  "epoch (default: the schedule's, else all)"),
                                cl::init(0));
static cl::opt<bool> evaluate("eval", cl::desc("--train: evaluate on the test split (t10k-*) "
                                               "after every epoch (text: validate)"));
static cl::opt<long long> evalBatches("eval-batches",
                                      cl::desc("--train --eval: at most this many test "
                                               "batches (0: all)"),
                                      cl::init(0));
static cl::opt<long long> reportEvery("report-every",
                                      cl::desc("--train, a text program: a step= line every "
                                               "N steps (0: a fifth of the run)"),
                                      cl::init(0));
static cl::opt<long long> stopAfter("stop-at-step",
                                    cl::desc("--train: end after this many steps of the run "
                                             "(which keeps its planned length)"),
                                    cl::init(0));
static cl::opt<std::string> metricsPath("metrics",
                                        cl::desc("--train: write a JSON line per step here"));
static cl::opt<unsigned> maxPrint("max-print",
                                  cl::desc("print tensors of up to this many elements "
                                           "in full, larger ones as a summary"),
                                  cl::init(64));

/// A dense attribute, as a reference tensor.
static FailureOr<ref::Tensor> parseTensor(StringRef text, MLIRContext *ctx) {
  Attribute attr = parseAttribute(text, ctx);
  auto dense = dyn_cast_or_null<DenseElementsAttr>(attr);
  if (!dense) {
    llvm::errs() << "error: '" << text << "' is not a dense elements attribute\n";
    return failure();
  }
  auto type = cast<RankedTensorType>(dense.getType());
  std::optional<ref::ElementType> et = ref::ElementType::get(type.getElementType());
  if (!et) {
    llvm::errs() << "error: unsupported element type in '" << text << "'\n";
    return failure();
  }
  std::vector<double> data;
  if (et->isFloat()) {
    for (APFloat v : dense.getValues<APFloat>())
      data.push_back(v.convertToDouble());
  } else {
    bool isSigned = et->kind == ref::ElementType::Kind::Signed && !et->isBool();
    for (APInt v : dense.getValues<APInt>())
      data.push_back(isSigned ? static_cast<double>(v.getSExtValue())
                              : static_cast<double>(v.getZExtValue()));
  }
  return ref::Tensor(*et, type.getShape(), std::move(data));
}

static std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

static void printTensor(llvm::raw_ostream &os, const ref::Tensor &t) {
  os << t.typeString();
  if (t.size() <= static_cast<int64_t>(maxPrint)) {
    os << " = [";
    for (int64_t i = 0; i < t.size(); ++i)
      os << (i ? ", " : "") << num(t[i]);
    os << "]\n";
    return;
  }
  double sum = 0, lo = t[0], hi = t[0];
  for (double v : t.data()) {
    sum += v;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  os << " sum " << num(sum) << " min " << num(lo) << " max " << num(hi) << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "synplexum reference interpreter\n");
  if ((int)!graphName.empty() + (int)!handlerName.empty() + (int)trainRun != 1) {
    llvm::errs() << "error: give exactly one of --graph, --handler and --train\n";
    return 1;
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerUpstreamDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  ctx.printOpOnDiagnostic(false);

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(file), SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sources, &ctx);
  ParserConfig config(&ctx, /*verifyAfterParse=*/!noVerify);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sources, config);
  if (!module)
    return 1;

  if (trainRun) {
    interp::TrainOptions o;
    o.dataDir = dataDir;
    o.epochs = epochs;
    o.steps = steps;
    o.evaluate = evaluate;
    o.evalBatches = evalBatches;
    o.metricsPath = metricsPath;
    o.reportEvery = reportEvery;
    o.stopAfter = stopAfter;
    return interp::train(*module, o);
  }

  ref::StateEnv state;
  if (initSeed >= 0)
    for (auto actor : module->getOps<l1::ActorOp>())
      if (failed(ref::initializeActorState(actor, static_cast<uint64_t>(initSeed), state)))
        return 1;
  for (const std::string &s : states) {
    auto [key, value] = StringRef(s).split('=');
    auto [actor, field] = key.split("::");
    if (field.empty() || value.empty()) {
      llvm::errs() << "error: --state wants actor::field=<dense attribute>, got '" << s
                   << "'\n";
      return 1;
    }
    FailureOr<ref::Tensor> t = parseTensor(value, &ctx);
    if (failed(t))
      return 1;
    state.set(actor, field, std::move(*t));
  }
  SmallVector<ref::Tensor> inputs;
  for (const std::string &a : args) {
    FailureOr<ref::Tensor> t = parseTensor(a, &ctx);
    if (failed(t))
      return 1;
    inputs.push_back(std::move(*t));
  }

  if (!graphName.empty()) {
    auto graph = module->lookupSymbol<l1::TensorGraphOp>(graphName);
    if (!graph) {
      llvm::errs() << "error: no tensor graph @" << graphName << "\n";
      return 1;
    }
    auto results = ref::interpretTensorGraph(graph, inputs, state);
    if (failed(results))
      return 1;
    for (auto [i, t] : llvm::enumerate(*results)) {
      llvm::outs() << "result #" << i << ": ";
      printTensor(llvm::outs(), t);
    }
    return 0;
  }

  auto [actorName, handler] = StringRef(handlerName).split("::");
  auto actor = module->lookupSymbol<l1::ActorOp>(actorName);
  auto op = actor ? actor.lookupSymbol<l1::HandlerOp>(handler) : l1::HandlerOp();
  if (!op) {
    llvm::errs() << "error: no handler @" << actorName << "::@" << handler << "\n";
    return 1;
  }
  if (failed(ref::interpretHandler(op, inputs, state)))
    return 1;
  for (auto field : actor.getBody().getOps<l1::StateOp>())
    if (const ref::Tensor *t = state.lookup(actorName, field.getSymName())) {
      llvm::outs() << "@" << actorName << "::@" << field.getSymName() << ": ";
      printTensor(llvm::outs(), *t);
    }
  return 0;
}
