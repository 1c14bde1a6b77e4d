//===- IPU21Programs.cpp - The checks of ipu21 control programs -------------===//
//
// Row IPU.8, the bulk-synchronous discipline: a phase (`execute`, `copy`,
// `stream_in`, `stream_out`) is followed by a `sync` before the next phase
// or control step (`sequence`, `repeat`, `if`) begins and before its block
// ends. A `repeat` body therefore ends synced, so running it again is a
// fresh superstep. With the discipline, the steps each reference resolve
// to the right kind of op.
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/IPU21/IPU21Graph.h"
#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Support/Property.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::ipu21;

namespace {
class ProgramChecker {
public:
  explicit ProgramChecker(GraphIndex &index) : index(index) {}

  LogicalResult checkBlock(Block &block) {
    Operation *pending = nullptr; // the phase not yet followed by a sync
    for (Operation &op : block) {
      if (isa<SyncOp>(op)) {
        pending = nullptr;
        continue;
      }
      if (failed(checkReference(op)))
        return failure();
      if (pending)
        return unsynced(&op, pending, "begins");
      bool isPhase = isa<ExecuteOp, CopyOp, StreamInOp, StreamOutOp>(op);
      if (isPhase) {
        pending = &op;
        continue;
      }
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (failed(checkBlock(inner)))
            return failure();
    }
    if (pending) {
      auto diag = emitCheckError(pending, Property::Safety, "IPU.8")
                  << "this phase is the last of its block and no sync follows it; every "
                     "superstep ends with a sync";
      return diag;
    }
    return success();
  }

private:
  LogicalResult unsynced(Operation *op, Operation *pending, StringRef verb) {
    auto diag = emitCheckError(op, Property::Safety, "IPU.8")
                << "'" << op->getName() << "' " << verb << " before the previous phase "
                << "synced: put an ipu21.sync between them";
    diag.attachNote(pending->getLoc()) << "the phase without a sync";
    return diag;
  }

  template <typename OpT>
  LogicalResult expect(Operation *op, FlatSymbolRefAttr ref, StringRef what) {
    if (!index.lookup<OpT>(ref.getValue()))
      return op->emitOpError() << "'" << ref.getValue() << "' is not " << what
                               << " of this graph";
    return success();
  }

  LogicalResult checkReference(Operation &op) {
    return llvm::TypeSwitch<Operation *, LogicalResult>(&op)
        .Case([&](ExecuteOp e) {
          return expect<ComputeSetOp>(e, e.getComputeSetAttr(), "an ipu21.compute_set");
        })
        .Case([&](CopyOp c) { return expect<ExchangeOp>(c, c.getExchangeAttr(), "an ipu21.exchange"); })
        .Case([&](IfOp i) { return expect<TensorOp>(i, i.getCondAttr(), "an ipu21.tensor"); })
        .Case([&](StreamInOp s) { return expect<TensorOp>(s, s.getTensorAttr(), "an ipu21.tensor"); })
        .Case([&](StreamOutOp s) { return expect<TensorOp>(s, s.getTensorAttr(), "an ipu21.tensor"); })
        .Default([](Operation *) { return success(); });
  }

  GraphIndex &index;
};
} // namespace

LogicalResult synpl::ipu21::verifyPrograms(GraphOp graph, GraphIndex &index) {
  ProgramChecker checker(index);
  for (Operation &op : graph.getBody().front())
    if (auto program = dyn_cast<ProgramOp>(op))
      if (failed(checker.checkBlock(program.getBody().front())))
        return failure();
  return success();
}
