//===- Translate.cpp - ipu21 graphs to program files ------------------------===//
//
// A verified graph already holds every number the program file needs: the
// addresses and sizes the memory checks accepted, the fields in their
// codelet's order, the descriptor sizes the exchange checks computed. This
// file only copies them out, in the order the ops appear.
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/IPU21/Translate.h"
#include "TranslateUOp.h"

#include "synpl/Dialect/IPU21/IPU21Codelets.h"
#include "synpl/Dialect/IPU21/IPU21Graph.h"
#include "synpl/Dialect/L0UOp/L0UOpTables.h"
#include "synpl/Target/IPU21/ExchangeSchedule.h"
#include "synpl/Target/IPU21/ProgramFile.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;

namespace {
sim::TileSet tileSetOf(ArrayRef<int64_t> flat) {
  sim::TileSet set;
  for (size_t i = 0; i + 1 < flat.size(); i += 2)
    set.ranges.push_back({flat[i], flat[i + 1]});
  return set;
}

sim::CodeletKind codeletKindOf(CodeletKind kind) {
  switch (kind) {
  case CodeletKind::amp_matmul:
    return sim::CodeletKind::AmpMatmul;
  case CodeletKind::reduce_add:
    return sim::CodeletKind::ReduceAdd;
  case CodeletKind::copy:
    return sim::CodeletKind::Copy;
  case CodeletKind::fill:
    return sim::CodeletKind::Fill;
  case CodeletKind::uop:
    return sim::CodeletKind::UOp;
  }
  return sim::CodeletKind::Copy;
}

class Translator {
public:
  explicit Translator(GraphOp graph) : graph(graph), index(graph) {}

  FailureOr<sim::Program> run() {
    sim::Program program;
    program.name = graph.getSymName().str();
    TargetAttr t = graph.getTarget();
    program.target = {t.getArch().str(), t.getTiles(), t.getBytesPerTile(),
                      t.getElementBytes(), t.getWorkers(), t.getClockHz(),
                      t.getSramBase(), t.getExecEnd(), t.getInterleavedBegin(),
                      t.getSramEnd(), t.getRptCountMax()};
    Block &body = graph.getBody().front();
    // Objects first: fields, sends and steps refer to them by index.
    for (Operation &op : body) {
      if (auto tensor = dyn_cast<TensorOp>(op)) {
        sim::Tensor out;
        out.name = tensor.getSymName().str();
        out.type = elemTypeOf(tensor.getElementType());
        out.shape.assign(tensor.getTensorType().getShape().begin(),
                         tensor.getTensorType().getShape().end());
        for (const MappedInterval &iv : tensor.getMapping())
          out.mapping.push_back({iv.tile, iv.begin, iv.end});
        out.address = tensor.getAddress();
        tensors[tensor] = program.tensors.size();
        program.tensors.push_back(std::move(out));
      } else if (auto buffer = dyn_cast<BufferOp>(op)) {
        buffers[buffer] = program.buffers.size();
        program.buffers.push_back({buffer.getSymName().str(), elemTypeOf(buffer.getElemType()),
                                   tileSetOf(buffer.getTiles()), buffer.getElements(),
                                   buffer.getAddress()});
      } else if (auto codelet = dyn_cast<CodeletOp>(op)) {
        codelets[codelet] = program.codelets.size();
        sim::Codelet out;
        out.name = codelet.getSymName().str();
        out.kind = codeletKindOf(codelet.getKind());
        out.codeBytes = codelet.getCodeBytes();
        out.address = codelet.getAddress();
        if (codelet.getKind() == CodeletKind::uop) {
          if (failed(translateUOpCodelet(codelet, out)))
            return failure();
        } else {
          out.inType = elemTypeOf(codelet.getInType());
          out.outType = elemTypeOf(codelet.getOutType());
        }
        program.codelets.push_back(std::move(out));
      }
    }
    for (Operation &op : body) {
      if (auto set = dyn_cast<ComputeSetOp>(op)) {
        computeSets[set] = program.computeSets.size();
        program.computeSets.push_back(computeSet(set));
      } else if (auto exchange = dyn_cast<ExchangeOp>(op)) {
        exchanges[exchange] = program.exchanges.size();
        program.exchanges.push_back(translateExchange(exchange));
      }
    }
    auto main = index.lookup<ProgramOp>("main");
    if (!main)
      return graph.emitError() << "has no ipu21.program @main to run";
    program.main.kind = sim::StepKind::Sequence;
    program.main.body = steps(main.getBody().front());
    return program;
  }

private:
  sim::Endpoint endpoint(FlatSymbolRefAttr ref, int64_t begin) {
    sim::Endpoint e;
    e.begin = begin;
    if (auto tensor = index.lookup<TensorOp>(ref.getValue())) {
      e.isTensor = true;
      e.object = tensors.lookup(tensor);
    } else {
      e.object = buffers.lookup(index.lookup<BufferOp>(ref.getValue()));
    }
    return e;
  }

  sim::ComputeSet computeSet(ComputeSetOp set) {
    sim::ComputeSet out;
    out.name = set.getSymName().str();
    for (Operation &op : set.getBody().front()) {
      auto vertex = cast<VertexOp>(op);
      auto codelet = index.lookup<CodeletOp>(vertex.getCodelet());
      sim::Vertex v;
      v.codelet = codelets.lookup(codelet);
      v.tiles = tileSetOf(vertex.getTiles());
      for (unsigned i = 0, e = vertex.getFieldNames().size(); i < e; ++i) {
        auto [lo, hi] = vertex.getFieldRange(i);
        sim::Endpoint object = endpoint(vertex.getFieldObject(i), lo);
        v.fields.push_back({object.isTensor, object.object, lo, hi - lo});
      }
      // Parameters in the codelet's order; a float value as its f64 bits.
      if (codelet.getKind() == CodeletKind::uop)
        for (const std::string &name : uopParamNames(codelet))
          v.params.push_back(vertex.getParam(name));
      for (StringRef name : codeletSpec(codelet.getKind()).params) {
        Attribute value = vertex.getParams().get(name);
        if (auto f = dyn_cast<FloatAttr>(value))
          v.params.push_back(llvm::bit_cast<int64_t>(f.getValueAsDouble()));
        else if (name == "value")
          v.params.push_back(llvm::bit_cast<int64_t>(
              static_cast<double>(cast<IntegerAttr>(value).getInt())));
        else
          v.params.push_back(cast<IntegerAttr>(value).getInt());
      }
      v.stateAddress = vertex.getStateAddress();
      v.stateBytes = vertex.getStateBytes();
      out.vertices.push_back(std::move(v));
    }
    return out;
  }

  sim::Exchange translateExchange(ExchangeOp exchange) {
    sim::Exchange out;
    out.name = exchange.getSymName().str();
    for (Operation &op : exchange.getBody().front()) {
      auto send = cast<SendOp>(op);
      sim::Send s;
      s.src = endpoint(send.getSrcAttr(), send.getSrcBegin());
      if (auto tile = send.getSrcTile())
        s.src.tiles.ranges.push_back({*tile, *tile + 1});
      s.dst = endpoint(send.getDstAttr(), send.getDstBegin());
      if (auto tiles = send.getDstTiles())
        s.dst.tiles = tileSetOf(*tiles);
      s.count = send.getCount();
      s.rows = send.getNumRows();
      s.rowStride = send.getRowStride().value_or(0);
      s.advance = send.getAdvance().value_or(0);
      out.sends.push_back(std::move(s));
    }
    std::vector<int64_t> sends = sendsPerTile(graph, exchange, index);
    int64_t maxSends = 0;
    for (int64_t n : sends)
      maxSends = std::max(maxSends, n);
    out.descriptorAddress = exchange.getDescriptorAddress();
    out.descriptorBytes = exchange.getDescriptorBytes(maxSends);
    return out;
  }

  std::vector<sim::Step> steps(Block &block) {
    std::vector<sim::Step> out;
    for (Operation &op : block) {
      sim::Step step;
      if (auto seq = dyn_cast<SequenceOp>(op)) {
        step.kind = sim::StepKind::Sequence;
        step.body = steps(seq.getBody().front());
      } else if (auto repeat = dyn_cast<RepeatOp>(op)) {
        step.kind = sim::StepKind::Repeat;
        step.count = repeat.getCount();
        step.body = steps(repeat.getBody().front());
      } else if (auto execute = dyn_cast<ExecuteOp>(op)) {
        step.kind = sim::StepKind::Execute;
        step.ref = computeSets.lookup(index.lookup<ComputeSetOp>(execute.getComputeSet()));
      } else if (auto copy = dyn_cast<CopyOp>(op)) {
        step.kind = sim::StepKind::Copy;
        step.ref = exchanges.lookup(index.lookup<ExchangeOp>(copy.getExchange()));
      } else if (isa<SyncOp>(op)) {
        step.kind = sim::StepKind::Sync;
      } else if (auto cond = dyn_cast<IfOp>(op)) {
        step.kind = sim::StepKind::If;
        step.ref = tensors.lookup(index.lookup<TensorOp>(cond.getCond()));
        step.body = steps(cond.getThenBody().front());
        if (!cond.getElseBody().empty())
          step.elseBody = steps(cond.getElseBody().front());
      } else if (auto in = dyn_cast<StreamInOp>(op)) {
        step.kind = sim::StepKind::StreamIn;
        step.ref = tensors.lookup(index.lookup<TensorOp>(in.getTensor()));
        step.stream = in.getStream().str();
      } else if (auto outStep = dyn_cast<StreamOutOp>(op)) {
        step.kind = sim::StepKind::StreamOut;
        step.ref = tensors.lookup(index.lookup<TensorOp>(outStep.getTensor()));
        step.stream = outStep.getStream().str();
      }
      out.push_back(std::move(step));
    }
    return out;
  }

  GraphOp graph;
  GraphIndex index;
  llvm::DenseMap<Operation *, int32_t> tensors, buffers, codelets, computeSets, exchanges;
};
} // namespace

FailureOr<sim::Program> synpl::ipu21::toProgram(GraphOp graph) {
  return Translator(graph).run();
}

FailureOr<GraphOp> synpl::ipu21::findGraph(Operation *op) {
  if (auto graph = dyn_cast<GraphOp>(op))
    return graph;
  GraphOp graph;
  if (auto module = dyn_cast<ModuleOp>(op))
    for (Operation &inner : *module.getBody())
      if (auto g = dyn_cast<GraphOp>(inner)) {
        if (graph)
          return inner.emitError("a program file holds one ipu21.graph; this module has several");
        graph = g;
      }
  if (!graph)
    return op->emitError("expected an ipu21.graph (or a module holding one)");
  return graph;
}

std::string synpl::ipu21::hostPlanName(StringRef graph) { return (graph + ".host").str(); }

LogicalResult synpl::ipu21::addHostSide(l0uop::PlanOp host, GraphOp graph, sim::Program &program) {
  l0uop::PlanTableWriter w;
  bool failed = false;
  auto fail = [&](Operation *op, const Twine &why) {
    op->emitError() << "the host side cannot hold it: " << why;
    failed = true;
  };
  for (Operation &op : host.getBody().front())
    if (!isa<l0uop::PoolOp, l0uop::SlotOp, l0uop::InitOp, l0uop::IngestOp, l0uop::ReportOp>(op))
      return op.emitError() << "the host side of ipu21 program @" << graph.getSymName()
                            << " holds pools, slots, inits, ingests and reports only; the "
                               "device runs everything else";
  w.addMemory(host, fail);
  // One stream, with no entries: the device runs the step whole.
  w.add(SYNPL_PLAN_STREAMS, synpl_plan_stream{w.str(graph.getSymName()), 0, 0});
  w.addHostIO(host, fail);
  if (failed)
    return failure();
  // Every slot is a tensor, but an ingest's or a report's: the program
  // streams those.
  llvm::StringSet<> streamed;
  for (auto ingest : host.getBody().front().getOps<l0uop::IngestOp>())
    for (Attribute slot : ingest.getSlots())
      streamed.insert(cast<FlatSymbolRefAttr>(slot).getValue());
  for (auto report : host.getBody().front().getOps<l0uop::ReportOp>())
    streamed.insert(report.getSlot());
  for (auto slot : host.getBody().front().getOps<l0uop::SlotOp>())
    if (!streamed.contains(slot.getSymName()) && !graph.lookup<TensorOp>(slot.getSymName()))
      return slot.emitError() << "slot @" << slot.getSymName() << " of the host side has no "
                              << "tensor of its name in ipu21.graph @" << graph.getSymName();
  synpl_plan_header head = w.headerOf(host);
  head.name = w.str(graph.getSymName());
  program.hostTable = w.finish(head);
  program.hostStrings = w.takeStrings();
  return success();
}

FailureOr<sim::Program> synpl::ipu21::toScheduledProgram(Operation *op) {
  FailureOr<GraphOp> graph = findGraph(op);
  if (failed(graph))
    return failure();
  FailureOr<sim::Program> program = toProgram(*graph);
  if (failed(program))
    return failure();
  if (auto module = dyn_cast<ModuleOp>(op))
    if (auto host = module.lookupSymbol<l0uop::PlanOp>(hostPlanName(graph->getSymName())))
      if (failed(addHostSide(host, *graph, *program)))
        return failure();
  // The exchange code: when each transfer runs (ExchangeSchedule.h). The
  // graph's verifier held it to the program's rules already; a program
  // that still breaks one is this translation's bug, reported as such.
  std::string error;
  if (!sim::checkProgram(*program, error, sim::CheckSchedules::No) ||
      !sim::scheduleExchanges(*program, error))
    return graph->emitError() << "internal error: the program of ipu21.graph @"
                              << graph->getSymName() << " cannot be scheduled: " << error;
  return program;
}

LogicalResult synpl::ipu21::saveProgramFile(Operation *op, StringRef path) {
  FailureOr<sim::Program> program = toScheduledProgram(op);
  if (failed(program))
    return failure();
  std::string error;
  if (!sim::saveProgram(path.str(), *program, error))
    return op->emitError() << path << ": " << error;
  return success();
}

void synpl::ipu21::registerToProgramTranslation() {
  TranslateFromMLIRRegistration reg(
      "synpl-ipu21-to-program",
      "Write an ipu21.graph as an ipu21 program file (versioned, checksummed) that "
      "synpl-ipu21-sim runs",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        FailureOr<sim::Program> program = toScheduledProgram(op);
        if (failed(program))
          return failure();
        os << sim::writeProgram(*program);
        return success();
      },
      [](DialectRegistry &registry) {
        registry.insert<IPU21Dialect, l0uop::L0UOpDialect>();
      });
}
