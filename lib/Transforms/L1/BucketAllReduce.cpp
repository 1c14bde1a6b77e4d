//===- BucketAllReduce.cpp - Gradient buckets of a data-parallel step -----===//
//
// --synpl-l1-bucket-all-reduce: adjacent l1.all_reduce ops of a stage, with
// the same reduction, merged in order into buckets of at most bucket-bytes
// (Passes.td has the contract).
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/Builders.h"

namespace synpl {
#define GEN_PASS_DEF_L1BUCKETALLREDUCE
#include "synpl/Transforms/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;

namespace {

uint64_t bytesOf(Value v) {
  RankedTensorType t = cast<l1::BufType>(v.getType()).getTensor();
  return uint64_t(t.getNumElements()) * ((t.getElementTypeBitWidth() + 7) / 8);
}

struct L1BucketAllReducePass
    : public synpl::impl::L1BucketAllReduceBase<L1BucketAllReducePass> {
  using L1BucketAllReduceBase::L1BucketAllReduceBase;

  /// Replaces `run` (adjacent all-reduces, one reduction) by its buckets.
  void bucket(ArrayRef<l1::AllReduceOp> run) {
    SmallVector<SmallVector<l1::AllReduceOp>> buckets;
    uint64_t bytes = 0;
    for (l1::AllReduceOp op : run) {
      uint64_t size = 0;
      for (Value v : op.getBuffers())
        size += bytesOf(v);
      if (buckets.empty() || (bucketBytes != 0 && bytes + size > bucketBytes)) {
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().push_back(op);
      bytes += size;
    }
    for (ArrayRef<l1::AllReduceOp> ops : buckets) {
      if (ops.size() < 2)
        continue;
      SmallVector<Value> buffers;
      SmallVector<Location> locs;
      for (l1::AllReduceOp op : ops) {
        llvm::append_range(buffers, op.getBuffers());
        locs.push_back(op.getLoc());
      }
      l1::AllReduceOp last = ops.back(), first = ops.front();
      OpBuilder b(last);
      auto merged =
          l1::AllReduceOp::create(b, b.getFusedLoc(locs), first.getReduce(), buffers);
      unsigned next = 0;
      for (l1::AllReduceOp op : ops) {
        for (Value r : op.getResults())
          r.replaceAllUsesWith(merged.getResult(next++));
        op.erase();
      }
    }
  }

  void runOnOperation() override {
    getOperation().walk([&](l1::StageOp stage) {
      for (Block &block : stage.getBody()) {
        SmallVector<SmallVector<l1::AllReduceOp>> runs;
        Operation *prev = nullptr;
        for (Operation &op : block) {
          auto ar = dyn_cast<l1::AllReduceOp>(op);
          if (!ar) {
            prev = nullptr;
            continue;
          }
          auto before = dyn_cast_or_null<l1::AllReduceOp>(prev);
          if (!before || before.getReduce() != ar.getReduce())
            runs.emplace_back();
          runs.back().push_back(ar);
          prev = &op;
        }
        for (ArrayRef<l1::AllReduceOp> run : runs)
          bucket(run);
      }
    });
  }
};

} // namespace
