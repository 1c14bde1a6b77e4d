//===- TensorParallel.cpp - Which layers a tensor-parallel placement splits ===//
//
// Tensor parallelism splits the large linear layers, each by output columns
// or by input rows (Megatron-LM's column- and row-parallel linears):
//
//  - columns: rank r holds columns [r N/d, (r+1) N/d) of the weight and
//    the bias and computes its block of the output; the ranks gather the
//    blocks (l1.all_gather). The backward pass takes the rank's block of
//    the output gradient (l1.block_slice at the rank) and sums the input
//    gradient's partials (l1.all_sum).
//  - rows: rank r holds rows [r K/d, (r+1) K/d) of the weight (the bias
//    whole), multiplies its block of the input's columns and the ranks sum
//    the partial outputs before the bias; the input gradient's blocks are
//    gathered.
//  - a column split whose output reaches a row split through elementwise
//    activations alone keeps its output as the rank's block: the
//    activations run on the block, which is the row split's input block,
//    and backward the row split's block of the input gradient goes back
//    the same way. The pair needs one sum forward and one backward.
//
// Everything else runs replicated, on the whole batch, on every rank. Here:
// which linears qualify, how a shard count splits them, what stops a model
// from being split, and the shard shapes of the split parameters and their
// optimizer state. The rules themselves are in AutodiffRules.cpp and
// AutodiffLoss.cpp.
//
//===----------------------------------------------------------------------===//
#include "L2ToL1Impl.h"

#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l2tol1;

SmallVector<SplitLinear> synpl::l2tol1::splittableLinears(ArrayRef<TrainableParam> params) {
  SmallVector<SplitLinear> splits;
  for (unsigned i = 0; i + 1 < params.size(); ++i) {
    auto linear = dyn_cast_or_null<l2::LinearOp>(params[i].layer);
    if (!linear || params[i + 1].layer != params[i].layer)
      continue;
    int64_t in = linear.getIn(), out = linear.getOut();
    if (in * out < kMinSplitElements)
      continue;
    auto type = cast<RankedTensorType>(linear.getInput().getType());
    SplitLinear s;
    s.layer = linear;
    s.name = StringRef(params[i].state).rsplit('_').first.str();
    s.weight = i;
    s.bias = i + 1;
    s.in = in;
    s.out = out;
    s.rows = type.getNumElements() / in;
    // The model's own input needs no gradient (nor does what only
    // reshapes it).
    s.inputGrad = !isa<BlockArgument>(l2::throughViews(linear.getInput()));
    splits.push_back(s);
    ++i;
  }
  // Pairs: a linear's output through activations (each the only user of
  // the one before) into the input of another.
  for (SplitLinear &s : splits) {
    Value y = s.layer->getResult(0);
    while (y.hasOneUse() && isa<l2::ActOp>(*y.getUsers().begin()))
      y = y.getUsers().begin()->getResult(0);
    if (!y.hasOneUse())
      continue;
    Operation *user = *y.getUsers().begin();
    for (auto [j, t] : llvm::enumerate(splits))
      if (t.layer == user && cast<l2::LinearOp>(user).getInput() == y)
        s.feeds = (int)j;
  }
  return splits;
}

SmallVector<SplitLinear> synpl::l2tol1::splitLinears(ArrayRef<SplitLinear> splittable,
                                                     int64_t ranks) {
  using Axis = SplitLinear::Axis;
  SmallVector<std::optional<SplitLinear>> chosen(splittable.size());
  for (auto [i, s] : llvm::enumerate(splittable)) {
    if (s.feeds < 0 || chosen[i] || chosen[s.feeds])
      continue;
    const SplitLinear &t = splittable[s.feeds];
    if (!s.divides(ranks, Axis::columns) || !t.divides(ranks, Axis::rows))
      continue;
    chosen[i] = s;
    chosen[i]->axis = Axis::columns;
    chosen[i]->blockOut = true;
    chosen[s.feeds] = t;
    chosen[s.feeds]->axis = Axis::rows;
    chosen[s.feeds]->blockIn = true;
  }
  for (auto [i, s] : llvm::enumerate(splittable)) {
    if (chosen[i])
      continue;
    // Elements each collective moves: a gather moves its whole, a sum
    // (a reduction and a gather) twice that.
    int64_t g = s.inputGrad ? 1 : 0;
    int64_t columns = s.out + 2 * g * s.in, rows = 2 * s.out + g * s.in;
    bool byColumns = s.divides(ranks, Axis::columns), byRows = s.divides(ranks, Axis::rows);
    if (!byColumns && !byRows)
      continue;
    chosen[i] = s;
    chosen[i]->axis = byColumns && (!byRows || columns <= rows) ? Axis::columns : Axis::rows;
  }
  SmallVector<SplitLinear> splits;
  for (std::optional<SplitLinear> &s : chosen)
    if (s)
      splits.push_back(*s);
  return splits;
}

std::string synpl::l2tol1::describeSplits(ArrayRef<SplitLinear> splits) {
  std::string text;
  for (auto [i, s] : llvm::enumerate(splits)) {
    text += (i ? ", " : "") + s.name +
            (s.axis == SplitLinear::Axis::columns ? " by columns" : " by rows");
    // A pair's column split is the split just before it (only activations
    // lie between them).
    if (s.blockIn && i > 0)
      text += " (paired with " + splits[i - 1].name + ")";
  }
  return text;
}

std::optional<std::string> synpl::l2tol1::tensorParallelObstacle(l2::MethodsOp methods) {
  Attribute rule = wholeTensorRule(methods.getUpdate());
  if (!rule)
    return std::nullopt;
  if (isa<l2::GradientClipAttr>(rule))
    return std::string("gradient_clip scales by the norm of every gradient, and a split "
                       "parameter's gradient is spread over the ranks");
  return std::string("muon orthogonalizes whole weight matrices, and a split weight is "
                     "spread over the ranks");
}

void synpl::l2tol1::shardParams(ArrayRef<SplitLinear> splits, int64_t ranks,
                                MutableArrayRef<TrainableParam> params,
                                MutableArrayRef<UpdateParam> update) {
  for (const SplitLinear &s : splits) {
    // The weight [in, out] by columns (axis 1) with the bias [out] by
    // blocks, or by rows (axis 0) with the bias whole.
    SmallVector<std::pair<unsigned, unsigned>, 2> split{{s.weight, s.weightAxis()}};
    if (s.axis == SplitLinear::Axis::columns)
      split.push_back({s.bias, 0u});
    for (auto [index, axis] : split) {
      params[index].shape[axis] /= ranks;
      params[index].shard = axis;
      update[index].shape = params[index].shape;
      update[index].shard = axis;
    }
  }
}
