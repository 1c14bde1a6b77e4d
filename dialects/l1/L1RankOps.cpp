//===- L1RankOps.cpp - Verifiers of the tensor ops across ranks -----------===//
//
// l1.all_gather, l1.all_sum and l1.block_slice (tensor parallelism, and the
// update handler of update sharding): their shapes (L1.5), and that the
// collectives run under a schedule whose `shards` (or, in a handler, whose
// `replicas`) they gather over (L1.2).
//
//===----------------------------------------------------------------------===//
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L1/L1Program.h"
#include "synpl/Analysis/Shapes.h"
#include "synpl/Support/Property.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::l1;
namespace sh = synpl::shapes;

static RankedTensorType tt(Type t) { return cast<RankedTensorType>(t); }

static InFlightDiagnostic shapeError(Operation *op) {
  return emitCheckError(op, Property::Consistency, "L1.5")
         << op->getName().stripDialect() << ": ";
}

/// `big` is `small` with dimension `axis` a multiple (`blocks` >= 1) of
/// small's; the element types agree.
static LogicalResult checkBlocks(Operation *op, RankedTensorType small, RankedTensorType big,
                                 uint64_t axis, StringRef smallName, StringRef bigName) {
  if (small.getElementType() != big.getElementType())
    return shapeError(op) << "element types " << small.getElementType() << " and "
                          << big.getElementType() << " differ";
  if (small.getRank() != big.getRank() || axis >= (uint64_t)small.getRank())
    return shapeError(op) << "axis " << axis << " of the " << smallName << " "
                          << sh::formatShape(small.getShape()) << " and the " << bigName << " "
                          << sh::formatShape(big.getShape())
                          << ": both need the same rank, above the axis";
  for (int64_t d = 0; d < small.getRank(); ++d) {
    int64_t s = small.getDimSize(d), b = big.getDimSize(d);
    bool ok = (uint64_t)d == axis ? s > 0 && b % s == 0 : s == b;
    if (!ok)
      return shapeError(op) << "the " << bigName << " " << sh::formatShape(big.getShape())
                            << " should be the " << smallName << " "
                            << sh::formatShape(small.getShape()) << " with axis " << axis
                            << " a multiple of its size";
  }
  return success();
}

LogicalResult AllGatherOp::verify() {
  return checkBlocks(*this, tt(getInput().getType()), tt(getResult().getType()), getAxis(),
                     "operand", "result");
}

LogicalResult AllSumOp::verify() {
  if (!tt(getInput().getType()).getElementType().isF32())
    return shapeError(*this) << "sums f32 tensors, not " << getInput().getType();
  return success();
}

LogicalResult BlockSliceOp::verify() {
  auto index = tt(getIndex().getType());
  if (index.getRank() != 0 || !index.getElementType().isF32())
    return shapeError(*this) << "the block index is a rank-0 f32 (tensor<f32>), not " << index;
  return checkBlocks(*this, tt(getResult().getType()), tt(getInput().getType()), getAxis(),
                     "result", "operand");
}

/// The number of ranks a collective in `op`'s program runs over: the
/// schedule's shards; in a handler of a data-parallel schedule (update
/// sharding), its replicas; else 0, and an error.
static FailureOr<int64_t> ranksOf(Operation *op, StringRef *what = nullptr) {
  ScheduleOp schedule;
  if (Operation *scope = getProgramScope(op))
    for (auto s : scope->getRegion(0).front().getOps<ScheduleOp>())
      schedule = s;
  if (what)
    *what = "shards";
  if (schedule && schedule.getShards())
    return (int64_t)schedule.getShards()->size();
  if (what)
    *what = "replicas";
  bool inHandler = op->getParentOfType<HandlerOp>() != nullptr;
  if (schedule && schedule.getReplicas() && inHandler)
    return (int64_t)schedule.getReplicas()->size();
  return emitCheckError(op, Property::Safety, "L1.2")
         << op->getName().stripDialect()
         << " runs across the ranks of a tensor-parallel schedule"
         << (inHandler ? " or, in a handler, the replicas of a data-parallel one" : "")
         << ", but "
         << (schedule ? std::string(inHandler ? "the l1.schedule lists neither"
                                              : "the l1.schedule lists no shards")
                      : std::string("the program has no l1.schedule"));
}

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &) {
  StringRef what;
  FailureOr<int64_t> shards = ranksOf(*this, &what);
  if (failed(shards))
    return failure();
  int64_t in = tt(getInput().getType()).getDimSize(getAxis());
  int64_t out = tt(getResult().getType()).getDimSize(getAxis());
  if (out != in * *shards)
    return emitCheckError(*this, Property::Consistency, "L1.5")
           << "all_gather: the schedule lists " << *shards << " " << what << ", so axis " << getAxis()
           << " gathers " << in << " x " << *shards << " = " << in * *shards << ", not " << out;
  return success();
}

LogicalResult AllSumOp::verifySymbolUses(SymbolTableCollection &) {
  return failure(failed(ranksOf(*this)));
}
