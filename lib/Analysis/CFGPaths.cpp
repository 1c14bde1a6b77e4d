//===- CFGPaths.cpp - Walk every path of a region's CFG --------------------===//
#include "synpl/Analysis/CFGPaths.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace synpl;

CFGPathVisitor::~CFGPathVisitor() = default;

void CFGPathVisitor::visitEdge(Operation *terminator, unsigned succIndex,
                               LiveValues &live) {
  Block *succ = terminator->getSuccessor(succIndex);
  // Successor operands are the operands the terminator passes on, when it
  // says which; otherwise (unknown terminator) nothing is handed on.
  if (auto branch = dyn_cast<BranchOpInterface>(terminator)) {
    SuccessorOperands operands = branch.getSuccessorOperands(succIndex);
    for (Value v : operands.getForwardedOperands())
      live.remove(v);
  }
  for (BlockArgument arg : succ->getArguments())
    live.insert(arg);
}

namespace {
struct Walker {
  CFGPathVisitor &visitor;
  size_t maxPaths;
  CFGWalkResult result;
  SmallVector<Block *, 16> path;
  SmallPtrSet<Block *, 16> onPath;

  // Returns false to stop the walk.
  bool walk(Block *block, LiveValues live) {
    if (onPath.contains(block)) {
      result.status = CFGWalkResult::Status::BackEdge;
      result.path.assign(path.begin(), path.end());
      result.path.push_back(block);
      return false;
    }
    path.push_back(block);
    onPath.insert(block);
    bool keepGoing = step(block, live);
    onPath.erase(block);
    path.pop_back();
    return keepGoing;
  }

  bool step(Block *block, LiveValues &live) {
    if (failed(visitor.visitBlock(block, path, live))) {
      result.status = CFGWalkResult::Status::Aborted;
      return false;
    }
    Operation *term = block->empty() ? nullptr : &block->back();
    unsigned numSucc = term ? term->getNumSuccessors() : 0;
    if (numSucc == 0) {
      if (++result.numPaths > maxPaths) {
        result.status = CFGWalkResult::Status::TooManyPaths;
        result.path.assign(path.begin(), path.end());
        return false;
      }
      if (failed(visitor.visitPathEnd(path, live))) {
        result.status = CFGWalkResult::Status::Aborted;
        return false;
      }
      return true;
    }
    for (unsigned i = 0; i < numSucc; ++i) {
      LiveValues next = live;
      visitor.visitEdge(term, i, next);
      if (!walk(term->getSuccessor(i), std::move(next)))
        return false;
    }
    return true;
  }
};
} // namespace

CFGWalkResult synpl::walkCFGPaths(Region &region, CFGPathVisitor &visitor,
                                  const LiveValues &initial, size_t maxPaths) {
  Walker w{visitor, maxPaths, {}, {}, {}};
  if (region.empty())
    return w.result;
  w.walk(&region.front(), initial);
  return w.result;
}

std::string synpl::formatBlock(Block *block) {
  Region *region = block->getParent();
  unsigned index = 0;
  if (region)
    for (Block &b : *region) {
      if (&b == block)
        break;
      ++index;
    }
  return "^bb" + std::to_string(index);
}

std::string synpl::formatCFGPath(ArrayRef<Block *> path) {
  std::string s;
  for (Block *b : path) {
    if (!s.empty())
      s += " -> ";
    s += formatBlock(b);
  }
  return s;
}
