//===- L0UOpToIPU21.cpp - l0uop plans to ipu21 graphs ----------------------===//
//
// --synpl-convert-l0uop-to-ipu21: each l0uop.plan becomes one ipu21.graph
// of the same name. Its slots become tensors; its kernels, in schedule
// order, become compute sets and exchanges whose tile plans the search
// chooses: bare matrix products on the AMP (MatmulPlan.h), every other
// kernel on the generic codelet, its parallel RANGEs spread over the tiles
// (KernelPlan.h). Every object is then placed in tile memory (Placement.cpp)
// and the graph verified. What the sink cannot place yet
// fails the whole plan with `lowered N of M plan items; not lowered: ...`,
// leaving the module untouched.
//
// A training program (a plan with ingests, inits or reports) keeps its
// host side: the plan, renamed `<name>.host`, holds only its pools, slots,
// inits, ingests and reports, which the executor binds. Main streams each
// ingest's slots in first and each report's slot out last; what
// evaluation must not run sits under an If on the training-mode slot
// (HostSide.h).
//
//===----------------------------------------------------------------------===//
#include "Emit.h"
#include "HostSide.h"
#include "MatmulPlan.h"

#include "synpl/Conversion/Passes.h"
#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Dialect/L0Ctl/L0CtlOps.h"
#include "synpl/Dialect/L0UOp/L0UOpMatch.h"
#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Support/NotLowered.h"
#include "synpl/Target/IPU21/Facts.h"

#include "llvm/ADT/StringSet.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace synpl {
#define GEN_PASS_DEF_CONVERTL0UOPTOIPU21
#include "synpl/Conversion/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;
using namespace synpl::l0toipu21;

namespace {


/// Why a product takes the generic codelet instead of the AMP.
constexpr StringLiteral kNotYet = "is more than the bare product the AMP computes";

} // namespace

FailureOr<MatmulKernel> synpl::l0toipu21::analyzeProduct(l0uop::KernelOp kernel, bool bare,
                                                         std::string &why) {
  std::optional<l0uop::MatmulStructure> m = l0uop::matchMatmulStructure(kernel);
  if (!m) {
    why = "not a matrix product";
    return failure();
  }
  MatmulKernel k;
  k.kernel = kernel;
  k.elem = m->elem;
  bool f32 = m->elem.isF32() && !m->castToF32;
  bool f16 = m->elem.isF16() && m->castToF32;
  if (!f32 && !f16) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << m->elem;
    why = "a product of " + s + " operands has no AMP form on the IPU (f16, f32)";
    return failure();
  }
  int64_t M = m->M, N = m->N, K = m->K;
  // A read [M][K] row-major, or (not bare) transposed: stored [K][M].
  k.transA = !bare && m->a.base == 0 && m->a.strideR == 1 && m->a.strideK == M && M > 1;
  if (!k.transA && (m->a.base != 0 || m->a.strideK != 1 || m->a.strideR != K)) {
    why = "A is not read row-major [M][K] (or, with an epilogue, [K][M]) from its start";
    return failure();
  }
  // B read [K][N] row-major, or (not bare) transposed: stored [N][K].
  k.transB = !bare && m->b.base == 0 && m->b.strideR == K && m->b.strideK == 1 && N > 1;
  if (!k.transB && (m->b.base != 0 || m->b.strideR != 1 || m->b.strideK != N)) {
    why = "B is not read row-major [K][N] (or, with an epilogue, [N][K]) from its start";
    return failure();
  }
  k.shape.M = m->M, k.shape.N = m->N, k.shape.K = m->K;
  k.shape.f32Inputs = f32;
  k.shape.inBytes = f32 ? 4 : 2;
  k.shape.outBytes = 4;
  k.a = kernel.getSlotOf(kernel.getBody().front().getArgument(m->a.arg)).getValue();
  k.b = kernel.getSlotOf(kernel.getBody().front().getArgument(m->b.arg)).getValue();
  k.structure = *m;
  if (!bare)
    return k; // the epilogue (and the sum's init) run on the generic codelet
  auto init = m->reduce.getInit().getDefiningOp<l0uop::ConstOp>();
  auto zero = init ? dyn_cast<FloatAttr>(init.getValue()) : FloatAttr();
  if (!zero || !zero.getValue().isZero()) {
    why = "the product's sum does not start at 0";
    return failure();
  }
  // The epilogue: only C[i, j] = the sum (constants aside).
  l0uop::StoreOp store;
  for (Operation *op : m->scalarOps) {
    if (isa<l0uop::ConstOp, l0uop::ReduceOp>(op))
      continue;
    if (auto s = dyn_cast<l0uop::StoreOp>(op); s && !store) {
      store = s;
      continue;
    }
    if (auto index = dyn_cast<l0uop::IndexOp>(op);
        index && index.getIndices().size() == 2 &&
        index.getIndices()[0] == m->ri.getResult() && index.getIndices()[1] == m->rj.getResult())
      continue;
    why = ("the epilogue's '" + op->getName().getStringRef() + "' " + kNotYet).str();
    return failure();
  }
  auto index = store ? store->getOperand(0).getDefiningOp<l0uop::IndexOp>() : nullptr;
  auto out = index ? dyn_cast<BlockArgument>(index.getBuffer()) : nullptr;
  if (!store || store->getNumOperands() != 2 || store->getOperand(1) != m->reduce.getResult() ||
      !index || index.getIndices().size() != 2 || !out ||
      out.getArgNumber() < kernel.getNumInputs()) {
    why = ("the epilogue does more than store C[i, j] = the sum: it " + kNotYet).str();
    return failure();
  }
  auto outType = cast<l0uop::BufType>(out.getType());
  if (!outType.getElementType().isF32() || outType.getShape() != ArrayRef<int64_t>{M, N}) {
    why = "C is not an f32 [M][N] buffer (the AMP's partials are f32)";
    return failure();
  }
  k.c = kernel.getSlotOf(out).getValue();
  return k;
}

namespace {

struct ConvertL0UOpToIPU21Pass
    : public synpl::impl::ConvertL0UOpToIPU21Base<ConvertL0UOpToIPU21Pass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<ipu21::Facts> facts = ipu21::factsFor(arch);
    if (!facts) {
      module.emitError() << "unknown IPU '" << arch << "'; known: ipu21, ipu2";
      return signalPassFailure();
    }
    if (maxTiles < 0) {
      module.emitError() << "tiles=" << maxTiles << " is negative";
      return signalPassFailure();
    }
    SmallVector<l0uop::PlanOp> plans(module.getOps<l0uop::PlanOp>());
    for (l0uop::PlanOp plan : plans)
      if (failed(convert(plan, *facts)))
        return signalPassFailure();
  }

  LogicalResult convert(l0uop::PlanOp plan, const ipu21::Facts &facts);
};

/// A kernel of the plan and how the sink runs it: a product on the AMP, or
/// any other body on the generic codelet.
struct PlannedKernel {
  l0uop::KernelOp kernel;
  std::optional<MatmulKernel> matmul;
};

/// The tensor type of a slot: a tile stores an i1 as a byte.
RankedTensorType tensorTypeOf(l0uop::BufType buf) {
  Type elem = buf.getElementType();
  if (elem.isInteger(1))
    elem = IntegerType::get(buf.getContext(), 8, IntegerType::Unsigned);
  return RankedTensorType::get(buf.getShape(), elem);
}

LogicalResult ConvertL0UOpToIPU21Pass::convert(l0uop::PlanOp plan, const ipu21::Facts &facts) {
  MLIRContext *ctx = plan.getContext();
  // What each plan item becomes, or why it cannot.
  SmallVector<NotLowered> failures;
  std::vector<PlannedKernel> kernels;
  // The host's side: what the executor does around each step.
  SmallVector<l0uop::IngestOp> ingests;
  SmallVector<l0uop::InitOp> inits;
  SmallVector<l0uop::ReportOp> reports;
  SmallVector<l0uop::TransferOp> transfers;
  l0uop::StreamOp firstStream;
  llvm::DenseMap<Operation *, unsigned> order;
  int64_t total = 0;
  for (Operation &op : plan.getBody().front()) {
    ++total;
    if (isa<l0uop::PoolOp, l0uop::SlotOp, l0uop::EventOp, l0uop::RecordOp, l0uop::WaitOp>(op))
      continue; // memory becomes tensors; the BSP program is in order anyway
    if (auto kernel = dyn_cast<l0uop::KernelOp>(op)) {
      order[kernel] = order.size();
      PlannedKernel k;
      k.kernel = kernel;
      std::string why;
      if (FailureOr<MatmulKernel> m = analyzeProduct(kernel, /*bare=*/true, why); succeeded(m)) {
        k.matmul = *m;
      } else {
        why.clear();
        if (!kernel.getSharedArgs().empty())
          why = "it shares buffers between the threads of a block; a tile's workers do not";
        else
          (void)KernelModel::build(kernel.getBody().front(), kernel.getNumInputs(), why);
        if (!why.empty()) {
          failures.push_back({kernel, why, false, "kernel @" + kernel.getSymName().str()});
          continue;
        }
      }
      kernels.push_back(std::move(k));
      continue;
    }
    if (auto stream = dyn_cast<l0uop::StreamOp>(op)) {
      int64_t last = -1;
      for (Attribute entry : stream.getEntries()) {
        Operation *target = SymbolTable::lookupSymbolIn(plan, cast<FlatSymbolRefAttr>(entry).getAttr());
        auto kernel = dyn_cast_or_null<l0uop::KernelOp>(target);
        auto it = kernel ? order.find(kernel) : order.end();
        if (isa_and_nonnull<l0uop::TransferOp>(target))
          continue; // a batch in or a report out: checked below
        if (!kernel) {
          failures.push_back({stream, "it runs @" + cast<FlatSymbolRefAttr>(entry).getValue().str() +
                                          ", which is neither a kernel nor a transfer",
                              false, "stream @" + stream.getSymName().str()});
          break;
        }
        if (it == order.end() || int64_t(it->second) < last) {
          failures.push_back({stream, "it runs its kernels in another order than the plan lists "
                                      "them; the BSP program runs them in the plan's order",
                              false, "stream @" + stream.getSymName().str()});
          break;
        }
        last = it->second;
      }
      // Steps in flight each take a stream of their own, all running the
      // same entries: the chip runs the steps one after the other.
      if (!firstStream)
        firstStream = stream;
      else if (stream.getEntries() != firstStream.getEntries())
        failures.push_back({stream, "it runs other entries than @" +
                                        firstStream.getSymName().str() +
                                        "; the ipu21 sink runs every step the same way",
                            false, "stream @" + stream.getSymName().str()});
      continue;
    }
    if (auto tx = dyn_cast<l0uop::TransferOp>(op)) {
      transfers.push_back(tx);
      continue;
    }
    if (auto ingest = dyn_cast<l0uop::IngestOp>(op)) {
      ingests.push_back(ingest);
      continue;
    }
    if (auto init = dyn_cast<l0uop::InitOp>(op)) {
      inits.push_back(init);
      continue;
    }
    if (auto report = dyn_cast<l0uop::ReportOp>(op)) {
      reports.push_back(report);
      continue;
    }
    // The host's control program dispatches each batch onto the stream of
    // the next step in flight. The chip runs the steps one after the other,
    // every stream the same entries (checked above): batch b runs as the
    // executor runs it without a control program, so it has nothing to do.
    if (isa<l0ctl::L0CtlDialect>(op.getDialect()))
      continue;
    failures.push_back({&op, "the ipu21 sink does not do host control code yet"});
  }
  // Transfers: only a batch from an ingest's slot to the device (streamed
  // in) and a report's value back to the host (streamed out).
  HostStreams io = HostStreams::of(plan, ingests, reports, transfers, failures);
  if (!failures.empty()) {
    reportNotLowered(total - int64_t(failures.size()), total, failures, "plan items");
    return failure();
  }

  // The tile plan of each kernel.
  auto targetAttr = ipu21::TargetAttr::get(
      ctx, facts.arch, facts.tiles, facts.bytesPerTile, facts.elementBytes, facts.workers,
      int64_t(facts.clockHz), facts.sramBase, facts.execEnd, facts.interleavedBegin,
      facts.sramEnd, facts.rptCountMax);
  int64_t tiles = maxTiles > 0 ? std::min<int64_t>(maxTiles, facts.tiles) : facts.tiles;
  TileBudget budget{tiles, facts.execBytes(), facts.interleavedBytes(), kReservedBytes, 0};
  // Every slot's home spread evenly, at 16-byte alignment: what the
  // generic kernels' windows share a tile with.
  for (auto slot : plan.getBody().front().getOps<l0uop::SlotOp>())
    budget.homes += (int64_t(slot.getBufType().getSizeInBytes()) / tiles + 16 + 15) / 16 * 16;
  // The graph, beside the plan.
  OpBuilder b(plan);
  Location loc = plan.getLoc();
  auto graph = ipu21::GraphOp::create(b, loc, plan.getSymNameAttr(), targetAttr);
  OpBuilder items = OpBuilder::atBlockBegin(&graph.getBody().emplaceBlock());
  std::optional<HostMode> mode;
  auto failGraph = [&] {
    graph.erase();
    if (mode)
      mode->undo();
    return failure();
  };
  auto program = ipu21::ProgramOp::create(items, loc, items.getStringAttr("main"));
  OpBuilder steps = OpBuilder::atBlockBegin(&program.getBody().emplaceBlock());
  items.setInsertionPoint(program);

  // Homes: a product's C takes its grid, a generic kernel's output the
  // windows its tiles write (when they can be homes), the others spread
  // evenly, each made when a kernel first needs it.
  llvm::StringMap<ipu21::TensorOp> tensors;
  auto newTensor = [&](StringRef slot, DenseI64ArrayAttr intervals, DenseI64ArrayAttr blocked,
                       DenseI64ArrayAttr grid) {
    auto type = tensorTypeOf(plan.lookup<l0uop::SlotOp>(slot).getBufType());
    return tensors[slot] = ipu21::TensorOp::create(items, loc, items.getStringAttr(slot),
                                                   TypeAttr::get(type), intervals, blocked, grid,
                                                   items.getI64IntegerAttr(0));
  };
  auto homeOf = [&](StringRef slot) {
    if (ipu21::TensorOp t = tensors.lookup(slot))
      return t;
    int64_t n = plan.lookup<l0uop::SlotOp>(slot).getBufType().getNumElements();
    int64_t perTile = (n + tiles - 1) / tiles;
    return newTensor(slot, DenseI64ArrayAttr(), items.getDenseI64ArrayAttr({0, perTile}),
                     DenseI64ArrayAttr());
  };
  // (tile, begin, end) triples sorted by tile, then begin: the tile-local
  // order.
  auto sortedTriples = [&](ArrayRef<int64_t> flat) {
    SmallVector<std::array<int64_t, 3>> triples;
    for (size_t i = 0; i + 2 < flat.size(); i += 3)
      triples.push_back({flat[i], flat[i + 1], flat[i + 2]});
    llvm::sort(triples);
    SmallVector<int64_t> sorted;
    for (auto &t : triples)
      sorted.append(t.begin(), t.end());
    return items.getDenseI64ArrayAttr(sorted);
  };
  // Codelets of the fixed kinds, one per kind and types.
  llvm::StringMap<ipu21::CodeletOp> codelets;
  auto codelet = [&](ipu21::CodeletKind kind, Type in, Type out, int64_t bytes) {
    std::string name;
    llvm::raw_string_ostream os(name);
    os << ipu21::stringifyCodeletKind(kind) << "_" << in << "_" << out;
    auto &slot = codelets[name];
    if (!slot)
      slot = ipu21::CodeletOp::create(
          items, loc, items.getStringAttr(name),
          ipu21::CodeletKindAttr::get(ctx, kind), TypeAttr::get(in), TypeAttr::get(out),
          ArrayAttr(), IntegerAttr(), items.getI64IntegerAttr(bytes), items.getI64IntegerAttr(0));
    return slot;
  };
  Homes homes;
  homes.fixedCodelet = codelet;
  // The tensors a kernel's lowering makes for itself (a product's C, a
  // fold's partials, a transposed operand) are written and read within the
  // kernel: scratch.
  homes.makeGridTensor = [&](StringRef name, RankedTensorType type, ArrayRef<int64_t> grid) {
    return ipu21::TensorOp::create(items, loc, items.getStringAttr(name), TypeAttr::get(type),
                                   DenseI64ArrayAttr(), DenseI64ArrayAttr(),
                                   items.getDenseI64ArrayAttr(grid), items.getI64IntegerAttr(0),
                                   items.getUnitAttr());
  };
  int64_t nextTile = 0;
  homes.nextTile = &nextTile;
  homes.chipTiles = tiles;
  homes.has = [&](StringRef slot) { return tensors.count(slot) != 0; };
  homes.of = homeOf;
  homes.make = [&](StringRef slot, ArrayRef<int64_t> flat) {
    return newTensor(slot, sortedTriples(flat), DenseI64ArrayAttr(), DenseI64ArrayAttr());
  };
  homes.makeTensor = [&](StringRef name, RankedTensorType type, ArrayRef<int64_t> flat) {
    int64_t perTile = (type.getNumElements() + tiles - 1) / tiles;
    return ipu21::TensorOp::create(
        items, loc, items.getStringAttr(name), TypeAttr::get(type),
        flat.empty() ? DenseI64ArrayAttr() : sortedTriples(flat),
        flat.empty() ? items.getDenseI64ArrayAttr({0, perTile}) : DenseI64ArrayAttr(),
        DenseI64ArrayAttr(), items.getI64IntegerAttr(0), items.getUnitAttr());
  };

  // A training program's evaluation steps run only what its reports need,
  // never what writes state: the rest runs under an If on the
  // training-mode slot, one If per kernel (so each kernel's buffers keep
  // their own lifetime).
  bool hostSide = !ingests.empty() || !inits.empty() || !reports.empty();
  if (hostSide) {
    FailureOr<HostMode> found = HostMode::find(plan, ingests, inits, reports, io);
    if (failed(found))
      return failGraph();
    mode = std::move(*found);
  }
  Type f32 = Float32Type::get(ctx);
  for (PlannedKernel &k : kernels) {
    OpBuilder gated(ctx);
    bool underIf = mode && mode->trainingOnly(k.kernel);
    if (underIf) {
      auto cond = FlatSymbolRefAttr::get(ctx, mode->slot());
      auto ifOp = ipu21::IfOp::create(steps, k.kernel.getLoc(), cond);
      gated.setInsertionPointToStart(&ifOp.getThenBody().emplaceBlock());
    }
    OpBuilder &kernelSteps = underIf ? gated : steps;
    if (!k.matmul) {
      if (failed(lowerGenericKernel(items, kernelSteps, k.kernel, facts, budget, homes)))
        return failGraph();
      continue;
    }
    MatmulKernel &mk = *k.matmul;
    auto result = planMatmul(mk.shape, facts, budget, k.kernel.getSymName());
    if (!result.succeeded()) {
      (void)search::emitSearchFailure(k.kernel, result.failure(), &result.report);
      search::recordSearchReport(std::move(result.report));
      return failGraph();
    }
    MatmulPlan plan = *result.winner;
    search::recordSearchReport(std::move(result.report));
    if (tensors.count(mk.c)) {
      k.kernel.emitError() << "slot @" << mk.c << " already has a home when this product "
                           << "writes it; the ipu21 sink gives a product's C its grid";
      return failGraph();
    }
    MatmulEmission m;
    m.name = k.kernel.getSymName().str();
    m.a = homeOf(mk.a);
    m.b = homeOf(mk.b);
    m.c = newTensor(mk.c, DenseI64ArrayAttr(), DenseI64ArrayAttr(),
                    items.getDenseI64ArrayAttr(gridMapping(plan)));
    m.amp = codelet(ipu21::CodeletKind::amp_matmul, mk.elem, f32, kAmpCodeBytes);
    m.fill = codelet(ipu21::CodeletKind::fill, f32, f32, kFillCodeBytes);
    if (plan.kSplit > 1)
      m.reduce = codelet(ipu21::CodeletKind::reduce_add, f32, f32, kReduceCodeBytes);
    m.shape = mk.shape;
    m.plan = plan;
    emitMatmul(items, k.kernel.getLoc(), m, kernelSteps);
  }
  if (hostSide) {
    // Each ingest's batch streams in before the step, each report out
    // after it; inits (and the mode) the host writes into their tensors.
    // (A stream is a phase of its own: a sync ends it.)
    OpBuilder head = OpBuilder::atBlockBegin(&program.getBody().front());
    for (l0uop::IngestOp ingest : ingests)
      for (Attribute slot : ingest.getSlots()) {
        StringRef name = cast<FlatSymbolRefAttr>(slot).getValue();
        StringRef tensor = io.deviceOf(name);
        homeOf(tensor);
        ipu21::StreamInOp::create(head, ingest.getLoc(), head.getStringAttr(name),
                                  FlatSymbolRefAttr::get(ctx, tensor));
        ipu21::SyncOp::create(head, loc);
      }
    for (l0uop::ReportOp report : reports) {
      StringRef tensor = io.deviceOf(report.getSlot());
      homeOf(tensor);
      ipu21::StreamOutOp::create(steps, report.getLoc(), FlatSymbolRefAttr::get(ctx, tensor),
                                 steps.getStringAttr(report.getSlot()));
      ipu21::SyncOp::create(steps, loc);
    }
    for (l0uop::InitOp init : inits)
      homeOf(init.getSlot());
    if (mode)
      homeOf(mode->slot());
    // A training step's temporaries are scratch: the slots of arena pools,
    // which the plan frees within the step, but for those the host writes
    // between steps (inits, the training mode). The batch arrives and the
    // reports leave by streams inside @main. (A plan without a host side
    // keeps every slot: whoever runs it reads and writes them around it.)
    llvm::StringSet<> hostWritten;
    for (l0uop::InitOp init : inits)
      hostWritten.insert(init.getSlot());
    if (mode)
      hostWritten.insert(mode->slot());
    for (auto &entry : tensors) {
      auto slot = plan.lookup<l0uop::SlotOp>(entry.getKey());
      auto pool = slot ? plan.lookup<l0uop::PoolOp>(slot.getPool()) : l0uop::PoolOp();
      if (pool && pool.getKind() == l0uop::PoolKind::arena &&
          !hostWritten.contains(entry.getKey()))
        entry.getValue().setScratch(true);
    }
  }
  if (failed(placeGraph(graph)) || failed(verify(graph)))
    return failGraph();
  if (!hostSide) {
    plan.erase();
    return success();
  }
  // The plan keeps its host side, renamed beside the graph: what the
  // executor binds (a slot no kernel or host item uses has no tensor and
  // goes too).
  for (Operation &op : llvm::make_early_inc_range(plan.getBody().front())) {
    auto slot = dyn_cast<l0uop::SlotOp>(op);
    if (slot ? !tensors.count(slot.getSymName()) && !io.onHost(slot.getSymName())
             : !isa<l0uop::PoolOp, l0uop::InitOp, l0uop::IngestOp, l0uop::ReportOp>(op))
      op.erase();
  }
  plan.setSymName(plan.getSymName().str() + ".host");
  return success();
}

} // namespace
