//===- TensorParallel.cpp - Which layers a tensor-parallel placement splits ===//
//
// Tensor parallelism splits the large linear layers by output columns: rank
// r holds columns [r N/d, (r+1) N/d) of the weight and the bias, computes
// its block of the output, and the ranks gather the blocks (l1.all_gather);
// the backward pass takes the rank's block of the output gradient
// (l1.block_slice at the rank) and sums the input gradient's partials
// (l1.all_sum). Everything else runs replicated, on the whole batch, on
// every rank. Here: which linears qualify, what stops a model from being
// split, and the shard shapes of the split parameters and their optimizer
// state. The rules themselves are in AutodiffRules.cpp and AutodiffLoss.cpp.
//
//===----------------------------------------------------------------------===//
#include "L2ToL1Impl.h"

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
    s.weight = i;
    s.bias = i + 1;
    s.in = in;
    s.out = out;
    s.rows = type.getNumElements() / in;
    // The model's own input needs no gradient (nor does what only
    // reshapes it).
    Value x = linear.getInput();
    while (Operation *def = x.getDefiningOp()) {
      if (!isa<l2::FlattenOp, l2::ReshapeOp>(def))
        break;
      x = def->getOperand(0);
    }
    s.inputGrad = !isa<BlockArgument>(x);
    splits.push_back(s);
    ++i;
  }
  return splits;
}

std::optional<std::string> synpl::l2tol1::tensorParallelObstacle(l2::MethodsOp methods) {
  std::optional<std::string> why;
  methods.getUpdate().walk([&](Attribute a) {
    if (why)
      return;
    if (isa<l2::GradientClipAttr>(a))
      why = "gradient_clip scales by the norm of every gradient, and a split parameter's "
            "gradient is spread over the ranks";
    else if (isa<l2::MuonAttr>(a))
      why = "muon orthogonalizes whole weight matrices, and a split weight is spread over "
            "the ranks";
  });
  return why;
}

void synpl::l2tol1::shardParams(ArrayRef<SplitLinear> splits, int64_t ranks,
                                MutableArrayRef<TrainableParam> params,
                                MutableArrayRef<UpdateParam> update) {
  for (const SplitLinear &s : splits) {
    if (!s.splitsOver(ranks))
      continue;
    // The weight [in, out] by columns (axis 1), the bias [out] by blocks.
    for (auto [index, axis] : {std::pair(s.weight, 1u), std::pair(s.bias, 0u)}) {
      params[index].shape[axis] /= ranks;
      params[index].shard = axis;
      update[index].shape = params[index].shape;
      update[index].shard = axis;
    }
  }
}
