//===- CFGPaths.cpp - Walk every path of a region's CFG --------------------===//
#include "synpl/Analysis/CFGPaths.h"

#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <functional>
#include <set>
#include <vector>

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
/// Finds a cycle reachable from `entry`: the DFS path from the entry to the
/// repeated block, inclusive. Empty if the CFG is acyclic.
SmallVector<Block *, 8> findBackEdge(Block *entry) {
  enum Color { White, Grey, Black };
  llvm::DenseMap<Block *, Color> color;
  SmallVector<Block *, 8> path;
  SmallVector<Block *, 8> cycle;
  std::function<bool(Block *)> dfs = [&](Block *b) {
    color[b] = Grey;
    path.push_back(b);
    for (Block *succ : b->getSuccessors()) {
      Color c = color.lookup(succ);
      if (c == Grey) {
        cycle.assign(path.begin(), path.end());
        cycle.push_back(succ);
        return true;
      }
      if (c == White && dfs(succ))
        return true;
    }
    path.pop_back();
    color[b] = Black;
    return false;
  };
  dfs(entry);
  return cycle;
}

struct Walker {
  CFGPathVisitor &visitor;
  CFGWalkOptions options;
  CFGWalkResult result;
  SmallVector<Block *, 16> path;
  std::set<std::pair<Block *, std::vector<const void *>>> seen;

  // Returns false to stop the walk.
  bool walk(Block *block, LiveValues live) {
    if (options.skipRepeatedStates) {
      std::vector<const void *> key;
      for (Value v : live)
        key.push_back(v.getAsOpaquePointer());
      llvm::sort(key);
      if (!seen.emplace(block, std::move(key)).second)
        return true;
    }
    path.push_back(block);
    bool keepGoing = step(block, live);
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
      if (++result.numPaths > options.maxPaths) {
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
                                  const LiveValues &initial, CFGWalkOptions options) {
  Walker w{visitor, options, {}, {}, {}};
  if (region.empty())
    return w.result;
  SmallVector<Block *, 8> cycle = findBackEdge(&region.front());
  if (!cycle.empty()) {
    w.result.status = CFGWalkResult::Status::BackEdge;
    w.result.path = std::move(cycle);
    return w.result;
  }
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
