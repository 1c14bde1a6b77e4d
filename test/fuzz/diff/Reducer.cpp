//===- Reducer.cpp - Shrink a failing program to a minimal one ------------===//
#include "Reducer.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"

#include <cmath>

using namespace mlir;
using namespace synpl;
using namespace synpl::difffuzz;

namespace {

/// The bounds of `p`'s values, or nothing when it does not build.
std::optional<std::vector<Bound>> boundsOf(MLIRContext *ctx, const Program &p,
                                           const SizeLimits &limits) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(ctx));
  buildSystem(*module, false);
  BuiltGraph built;
  std::string why;
  if (!buildGraph(*module, p, "g", limits, built, why))
    return std::nullopt;
  return built.values;
}

/// `p` with value `v` removed: its readers read `replacement` (a value
/// number of `p`, or -1 for a new input of v's type drawn from `range`).
/// Values nothing reads any more stay (the graph returns them); the
/// reducer's loop removes them one by one.
Program without(const Program &p, int v, int replacement, const Bound &range) {
  int nin = int(p.inputs.size());
  std::vector<int> uses = p.useCounts();
  Program q;
  q.syms = p.syms;
  q.dims = p.dims;
  bool needInput = replacement < 0 && uses[v] > 0;
  // Old value -> new value number (-1: gone).
  std::vector<int> map(p.numValues(), -1);
  for (int i = 0; i < nin; ++i)
    if (i != v) {
      map[i] = int(q.inputs.size());
      q.inputs.push_back(p.inputs[i]);
    }
  int fresh = -1;
  if (needInput) {
    InputSpec in;
    in.shape = p.spec(v).shape;
    in.elem = p.spec(v).elem;
    in.lo = float(range.lo), in.hi = float(range.hi);
    if (in.elem != Elem::F32)
      in.lo = std::ceil(range.lo), in.hi = std::floor(range.hi);
    fresh = int(q.inputs.size());
    q.inputs.push_back(in);
  }
  int newInputs = int(q.inputs.size());
  int next = newInputs;
  for (size_t j = 0; j < p.steps.size(); ++j) {
    int old = nin + int(j);
    if (old == v)
      continue;
    map[old] = next++;
  }
  map[v] = replacement >= 0 ? map[replacement] : fresh;
  for (size_t j = 0; j < p.steps.size(); ++j) {
    if (nin + int(j) == v)
      continue;
    Step s = p.steps[j];
    for (int &o : s.operands)
      o = map[o];
    q.steps.push_back(s);
  }
  return q;
}

} // namespace

Program synpl::difffuzz::reduce(MLIRContext *ctx, const Program &program,
                                const SizeLimits &limits,
                                const std::function<bool(const Program &)> &stillFails,
                                int maxCandidates, ReduceStats &stats) {
  Program best = program;
  auto size = [](const Program &p) {
    int64_t elements = 0;
    for (int v = 0; v < p.numValues(); ++v)
      elements += std::max<int64_t>(p.elements(v), 0);
    return std::make_pair(p.steps.size() + p.inputs.size(), elements);
  };
  auto tryCandidate = [&](const Program &c) {
    if (stats.candidates >= maxCandidates || !(size(c) < size(best)))
      return false;
    if (!boundsOf(ctx, c, limits))
      return false;
    ++stats.candidates;
    if (!stillFails(c))
      return false;
    ++stats.kept;
    best = c;
    return true;
  };

  bool progress = true;
  while (progress && stats.candidates < maxCandidates) {
    progress = false;
    std::optional<std::vector<Bound>> bounds = boundsOf(ctx, best, limits);
    if (!bounds)
      break;
    // Delete values, last first (a deleted reader frees its operands).
    for (int v = best.numValues() - 1; v >= 0 && !progress; --v) {
      std::vector<int> uses = best.useCounts();
      if (uses[v] == 0 || v >= int(best.inputs.size()))
        progress = tryCandidate(without(best, v, -1, (*bounds)[v]));
      if (progress)
        break;
      if (v >= int(best.inputs.size())) {
        // Bypass: readers read an operand of the same type.
        const Step &s = best.steps[v - best.inputs.size()];
        for (int o : s.operands)
          if (best.spec(o).elem == s.result.elem &&
              best.sameShape(best.spec(o).shape, s.result.shape) &&
              (progress = tryCandidate(without(best, v, o, {}))))
            break;
      }
    }
    if (progress)
      continue;
    // Shrink the symbolic sizes.
    for (size_t i = 0; i < best.syms.size() && !progress; ++i) {
      int64_t s = best.syms[i];
      for (int64_t to : {int64_t(1), int64_t(2), s / 2, s - 1}) {
        if (to < 1 || to >= s)
          continue;
        Program c = best;
        c.syms[i] = to;
        if ((progress = tryCandidate(c)))
          break;
      }
    }
  }
  return best;
}
