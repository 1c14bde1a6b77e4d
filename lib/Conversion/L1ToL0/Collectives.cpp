//===- Collectives.cpp - The collectives of tensor-parallel graphs --------===//
//
// l1.all_gather and l1.all_sum inside a tensor graph become l0uop.collective
// entries of the step's stream, between the kernels that produce their
// operand and those that read their result (Grouping.cpp forms their
// groups):
//
//  - all_gather: the ranks' operands one after the other in a destination
//    slot (the collective's layout). One along an inner axis is first
//    rewritten into one along axis 0 read through a reshape and a
//    transpose, which its readers fold into their loads.
//  - all_sum: an all_reduce(sum) in place on the operand's slot, completed
//    before the next launch that touches it.
//
//===----------------------------------------------------------------------===//
#include "Emitter.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1tol0;

void Emitter::gatherAlongAxisZero() {
  SmallVector<l1::AllGatherOp> inner;
  module.walk([&](l1::AllGatherOp op) {
    ArrayRef<int64_t> in = op.getInput().getType().getShape();
    int64_t outer = 1;
    for (int64_t d : in.take_front(op.getAxis()))
      outer *= d;
    if (outer > 1)
      inner.push_back(op);
  });
  for (l1::AllGatherOp op : inner) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    RankedTensorType in = op.getInput().getType(), out = op.getResult().getType();
    int64_t axis = (int64_t)op.getAxis();
    int64_t ranks = out.getDimSize(axis) / in.getDimSize(axis);
    Type element = in.getElementType();
    // [R * d0, d1, ...]: rank r's operand is block r.
    SmallVector<int64_t> stacked(in.getShape());
    stacked[0] *= ranks;
    Value g = l1::AllGatherOp::create(b, loc, RankedTensorType::get(stacked, element),
                                      op.getInput(), 0);
    // [R, d0, ...] -> [d0, ..., R, d_axis, ...] -> the result.
    SmallVector<int64_t> split{ranks};
    llvm::append_range(split, in.getShape());
    Value v = l1::ReshapeOp::create(b, loc, RankedTensorType::get(split, element), g);
    SmallVector<int64_t> perm, permuted;
    for (int64_t d = 1; d <= axis; ++d)
      perm.push_back(d);
    perm.push_back(0);
    for (int64_t d = axis + 1; d < (int64_t)split.size(); ++d)
      perm.push_back(d);
    for (int64_t p : perm)
      permuted.push_back(split[p]);
    v = l1::TransposeOp::create(b, loc, RankedTensorType::get(permuted, element), v,
                                b.getDenseI64ArrayAttr(perm));
    v = l1::ReshapeOp::create(b, loc, out, v);
    op.getResult().replaceAllUsesWith(v);
    op.erase();
  }
}

void Emitter::emitCollective(Group &g, Launch &launch) {
  Operation *op = g.ops.front();
  Slot *src = collectiveSource.lookup(op);
  if (!src)
    src = slotOf.lookup(op->getOperand(0));
  Slot *dst = slotOf.lookup(op->getResult(0));
  CollectiveItem c{launch.name, l0uop::CollectiveReduce::sum, {}, op->getLoc(), ""};
  c.inGraph = true;
  if (isa<l1::AllSumOp>(op)) {
    c.kind = l0uop::CollectiveKind::all_reduce;
    c.slots = {dst};
  } else {
    c.kind = l0uop::CollectiveKind::all_gather;
    c.slots = {src, dst};
  }
  launch.reads.push_back(src);
  launch.writes.push_back(dst);
  collectives.push_back(std::move(c));
}
