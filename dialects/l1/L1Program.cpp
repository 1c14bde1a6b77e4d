//===- L1Program.cpp - Queries over a whole l1 program -------------------===//
#include "synpl/Dialect/L1/L1Program.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace synpl::l1;

Dataflow Dataflow::build(Operation *anyOp) {
  SymbolTableCollection tables;
  return build(tables, anyOp);
}

Dataflow Dataflow::build(SymbolTableCollection &tables, Operation *from) {
  Dataflow df;
  Operation *scope = getProgramScope(from);
  if (!scope || scope->getNumRegions() == 0 || scope->getRegion(0).empty())
    return df;
  for (Operation &op : scope->getRegion(0).front()) {
    if (auto stage = dyn_cast<StageOp>(op)) {
      df.nodes.push_back(stage);
      stage.getBody().walk([&](Operation *inner) {
        if (auto fwd = dyn_cast<ForwardOp>(inner)) {
          Operation *t = lookupInProgram(tables, stage, fwd.getTargetAttr());
          if (isa_and_nonnull<StageOp, TensorGraphOp>(t))
            df.succ[stage].push_back(t);
        } else if (auto send = dyn_cast<SendOp>(inner)) {
          Operation *t = lookupInProgram(tables, stage, send.getTargetAttr());
          if (isa_and_nonnull<HandlerOp>(t))
            df.senders[t].push_back(stage);
        }
      });
    } else if (auto graph = dyn_cast<TensorGraphOp>(op)) {
      df.nodes.push_back(graph);
      if (auto then = graph.getThenAttr()) {
        Operation *t = lookupInProgram(tables, graph, then);
        if (isa_and_nonnull<StageOp, TensorGraphOp>(t))
          df.succ[graph].push_back(t);
      }
    }
  }
  return df;
}

ArrayRef<Operation *> Dataflow::getSuccessors(Operation *op) const {
  auto it = succ.find(op);
  return it == succ.end() ? ArrayRef<Operation *>() : ArrayRef(it->second);
}

ArrayRef<Operation *> Dataflow::getSenders(HandlerOp handler) const {
  auto it = senders.find(handler.getOperation());
  return it == senders.end() ? ArrayRef<Operation *>() : ArrayRef(it->second);
}

bool Dataflow::reaches(Operation *from, Operation *to) const {
  if (from == to)
    return true;
  llvm::DenseSet<Operation *> seen{from};
  SmallVector<Operation *> work{from};
  while (!work.empty()) {
    Operation *n = work.pop_back_val();
    for (Operation *m : getSuccessors(n)) {
      if (m == to)
        return true;
      if (seen.insert(m).second)
        work.push_back(m);
    }
  }
  return false;
}

SmallVector<Operation *> Dataflow::cycleThrough(Operation *op) const {
  llvm::DenseMap<Operation *, Operation *> parent;
  SmallVector<Operation *> work{op};
  while (!work.empty()) {
    Operation *n = work.pop_back_val();
    for (Operation *m : getSuccessors(n)) {
      if (m == op) {
        SmallVector<Operation *> path{op};
        for (Operation *p = n; p != op; p = parent.lookup(p))
          path.push_back(p);
        path.push_back(op);
        std::reverse(path.begin() + 1, path.end() - 1);
        return path;
      }
      if (!parent.count(m)) {
        parent[m] = n;
        work.push_back(m);
      }
    }
  }
  return {};
}
