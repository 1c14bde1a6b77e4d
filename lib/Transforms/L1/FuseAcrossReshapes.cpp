//===- FuseAcrossReshapes.cpp - Elementwise ops where a kernel awaits ----===//
//
// --synpl-l1-fuse-across-reshapes: a cheap elementwise op on the far side of
// a reshape from the kernel it could join moves across the reshape: into
// its producer's shape (a convolution's ReLU and mask in its matmul's
// epilogue) or into its readers' (a max pool's gradient in the ReLU's).
// Passes.td has the contract.
//
//===----------------------------------------------------------------------===//
#include "synpl/Transforms/Passes.h"

#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L1/L1Program.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace synpl {
#define GEN_PASS_DEF_L1FUSEACROSSRESHAPES
#include "synpl/Transforms/Passes.h.inc"
} // namespace synpl

using namespace mlir;
using namespace synpl;

namespace {

/// The elementwise ops: each result element depends on the operands'
/// elements at its own index alone (`l1.random` depends on the index
/// itself, so it is not one).
bool isElementwise(Operation *op) {
  return isa<l1::AddOp, l1::SubOp, l1::MulOp, l1::DivOp, l1::MaxOp, l1::MinOp,
             l1::ExpOp, l1::LogOp, l1::SqrtOp, l1::ReciprocalOp, l1::TanhOp,
             l1::CosOp, l1::AbsOp, l1::SignOp, l1::NegOp, l1::ScaleOp,
             l1::CmpOp, l1::SelectOp, l1::CastOp>(op);
}

/// Cheap to run in a matmul's epilogue: no transcendental, no division.
/// (A GELU's tanh in the epilogue of its linear layer measured slower than
/// the same GELU as a kernel of its own: the epilogue runs a row block's
/// few vectors at a time.)
bool isCheap(Operation *op) {
  return isa<l1::AddOp, l1::SubOp, l1::MulOp, l1::MaxOp, l1::MinOp, l1::AbsOp,
             l1::SignOp, l1::NegOp, l1::ScaleOp, l1::CmpOp, l1::SelectOp,
             l1::CastOp>(op);
}

bool isView(Operation *op) {
  return isa<l1::ReshapeOp, l1::TransposeOp, l1::BroadcastOp>(op);
}

/// Whether `v` is computed, through cheap elementwise ops alone, from
/// views, constants, arguments and state: nothing a kernel would hand it
/// in registers (a max pool's mask, from the activation and the pooled
/// maximum seen through a reshape and a broadcast). A rank-0 operand (a
/// scale's scalar) does not count.
bool readsOnlyViews(Value v, int depth = 0) {
  Operation *def = v.getDefiningOp();
  if (!def || isView(def) ||
      isa<l1::ConstOp, l1::WindowReadOp, l1::StateReadOp>(def))
    return true;
  if (depth >= 8 || !isElementwise(def) || !isCheap(def))
    return false;
  return llvm::all_of(def->getOperands(), [&](Value o) {
    return cast<RankedTensorType>(o.getType()).getRank() == 0 ||
           readsOnlyViews(o, depth + 1);
  });
}

ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

/// The shape `op` can run in instead of its own, when it has one: every
/// tensor operand a reshape of a value of that shape or a constant, at
/// least one of those values computed by an op (not a view: the kernel to
/// fuse with).
std::optional<SmallVector<int64_t>> sourceShape(Operation *op) {
  std::optional<SmallVector<int64_t>> shape;
  bool computed = false;
  for (OpOperand &use : op->getOpOperands()) {
    Value v = use.get();
    // A scale's scalar stays what it is.
    if (isa<l1::ScaleOp>(op) && use.getOperandNumber() == 1)
      continue;
    if (v.getDefiningOp<l1::ConstOp>())
      continue;
    auto reshape = v.getDefiningOp<l1::ReshapeOp>();
    if (!reshape)
      return std::nullopt;
    Value source = reshape.getOperand();
    if (shape && !llvm::equal(*shape, shapeOf(source)))
      return std::nullopt;
    shape = SmallVector<int64_t>(shapeOf(source));
    Operation *def = source.getDefiningOp();
    computed |= def && !isView(def) &&
                !isa<l1::ConstOp, l1::WindowReadOp, l1::StateReadOp>(def);
  }
  if (!shape || !computed || llvm::equal(*shape, shapeOf(op->getResult(0))))
    return std::nullopt;
  return shape;
}

struct L1FuseAcrossReshapesPass
    : public synpl::impl::L1FuseAcrossReshapesBase<L1FuseAcrossReshapesPass> {
  using L1FuseAcrossReshapesBase::L1FuseAcrossReshapesBase;

  /// The constants made in a new shape, one per constant and shape.
  llvm::DenseMap<std::pair<Attribute, Type>, Value> splats;

  /// Constant `c` in `type`: one per value and type, at the top of the
  /// graph (before every reader, whichever order the ops are in).
  Value splat(l1::ConstOp c, RankedTensorType type) {
    Value &at = splats[{c.getValueAttr(), type}];
    if (!at) {
      OpBuilder top = OpBuilder::atBlockBegin(c->getBlock());
      at = l1::ConstOp::create(top, c.getLoc(), type, c.getValueAttr());
    }
    return at;
  }

  /// A clone of `op` in `shape`: a scale's scalar as it is, a constant as
  /// its splat of `shape`, every other operand as `in` gives it.
  Operation *cloneIn(Operation *op, ArrayRef<int64_t> shape,
                     function_ref<Value(Value, RankedTensorType)> in) {
    OpBuilder b(op);
    IRMapping map;
    for (OpOperand &use : op->getOpOperands()) {
      Value v = use.get();
      if (isa<l1::ScaleOp>(op) && use.getOperandNumber() == 1)
        continue;
      auto type = RankedTensorType::get(
          shape, cast<RankedTensorType>(v.getType()).getElementType());
      auto c = v.getDefiningOp<l1::ConstOp>();
      map.map(v, c ? splat(c, type) : in(v, type));
    }
    Operation *clone = b.clone(*op, map);
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    clone->getResult(0).setType(RankedTensorType::get(shape, type.getElementType()));
    return clone;
  }

  /// Runs `op` in `shape` over its reshapes' sources, its result reshaped
  /// back to `op`'s shape.
  void intoProducer(Operation *op, ArrayRef<int64_t> shape) {
    Operation *clone = cloneIn(op, shape, [](Value v, RankedTensorType) {
      return v.getDefiningOp<l1::ReshapeOp>().getOperand();
    });
    OpBuilder b(op);
    Value back = l1::ReshapeOp::create(b, op->getLoc(), op->getResult(0).getType(),
                                       clone->getResult(0));
    op->getResult(0).replaceAllUsesWith(back);
    op->erase();
  }

  /// The converse, for an op that has no kernel to join in its own shape:
  /// a cheap elementwise op read only through one reshape, by elementwise
  /// ops, and computed from views alone (readsOnlyViews) runs in the
  /// reshape's shape over reshapes of its operands, and joins its readers'
  /// kernel (a max pool's gradient, formed per window, in the select of
  /// the ReLU's gradient per pixel).
  bool intoReaders(Operation *op) {
    if (!isElementwise(op) || !isCheap(op) || !op->getResult(0).hasOneUse())
      return false;
    auto reshape = dyn_cast<l1::ReshapeOp>(*op->getResult(0).getUsers().begin());
    if (!reshape || reshape.getResult().use_empty() ||
        !llvm::all_of(reshape.getResult().getUsers(), isElementwise) ||
        !llvm::all_of(op->getOperands(), [](Value v) {
          return cast<RankedTensorType>(v.getType()).getRank() == 0 ||
                 readsOnlyViews(v);
        }))
      return false;
    OpBuilder b(op);
    Operation *clone = cloneIn(op, shapeOf(reshape.getResult()),
                               [&](Value v, RankedTensorType type) -> Value {
                                 return l1::ReshapeOp::create(b, op->getLoc(), type, v);
                               });
    reshape.getResult().replaceAllUsesWith(clone->getResult(0));
    reshape.erase();
    op->erase();
    return true;
  }

  /// reshape(reshape(x)) is one reshape of x, or x itself.
  bool fold(l1::ReshapeOp reshape) {
    auto inner = reshape.getOperand().getDefiningOp<l1::ReshapeOp>();
    if (!inner)
      return false;
    Value source = inner.getOperand();
    if (llvm::equal(shapeOf(source), shapeOf(reshape.getResult()))) {
      reshape.getResult().replaceAllUsesWith(source);
      reshape.erase();
      return true;
    }
    reshape.getOperandMutable().assign(source);
    return true;
  }

  void runOnOperation() override {
    getOperation().walk([&](l1::TensorGraphOp graph) {
      l1::NodeOp node = l1::lookupNode(graph, graph.getNodeAttr());
      if (!node || node.getKind() != l1::NodeKind::compute ||
          node.getIsa() != StringRef("x86_64"))
        return;
      Block &body = graph.getEntry();
      int64_t toProducers = 0, toReaders = 0;
      for (bool changed = true; changed;) {
        changed = false;
        splats.clear(); // the sweep below may erase them
        // Into the producer's shape: all the readers of a reshape of a
        // value a kernel computes, or none (where one stays, the value is
        // stored for it anyway, and the ones that moved would store
        // intermediates the kernel after them kept in registers).
        SmallVector<l1::ReshapeOp> reshapes(body.getOps<l1::ReshapeOp>());
        for (l1::ReshapeOp reshape : reshapes) {
          Value source = reshape.getOperand();
          Operation *def = source.getDefiningOp();
          if (!def || readsOnlyViews(source) || reshape.getResult().use_empty())
            continue;
          // Its readers, each cheap and reading only reshapes of values of
          // the source's shape, constants, and the other readers (a
          // select of the ReLU by its mask).
          llvm::SetVector<Operation *> users;
          for (Operation *user : reshape.getResult().getUsers())
            users.insert(user);
          auto movable = [&](Operation *user) {
            if (!isElementwise(user) || !isCheap(user))
              return false;
            for (OpOperand &use : user->getOpOperands()) {
              Value v = use.get();
              if ((isa<l1::ScaleOp>(user) && use.getOperandNumber() == 1) ||
                  v.getDefiningOp<l1::ConstOp>() ||
                  users.contains(v.getDefiningOp()))
                continue;
              auto other = v.getDefiningOp<l1::ReshapeOp>();
              if (!other || !llvm::equal(shapeOf(other.getOperand()), shapeOf(source)))
                return false;
            }
            return true;
          };
          if (!llvm::all_of(users, movable))
            continue;
          // Readers first whose operands are all reshapes by now.
          SmallVector<Operation *> left(users.begin(), users.end());
          while (!left.empty()) {
            auto ready = llvm::find_if(left, [&](Operation *user) {
              std::optional<SmallVector<int64_t>> shape = sourceShape(user);
              return shape && llvm::equal(*shape, shapeOf(source));
            });
            if (ready == left.end())
              break; // a cycle through the readers: leave the rest
            intoProducer(*ready, shapeOf(source));
            left.erase(ready);
            ++toProducers;
            changed = true;
          }
        }
        // (Only elementwise ops: intoReaders erases the op and its reshape.)
        SmallVector<Operation *> ops;
        for (Operation &op : body)
          if (isElementwise(&op))
            ops.push_back(&op);
        for (Operation *op : ops)
          if (intoReaders(op)) {
            ++toReaders;
            changed = true;
          }
        for (auto reshape : llvm::make_early_inc_range(body.getOps<l1::ReshapeOp>()))
          changed |= fold(reshape);
        // A tensor graph has no dead values (L1.8): the reshapes and
        // constants the moved ops read may have had no other reader.
        for (bool erased = true; erased;) {
          erased = false;
          for (Operation &op : llvm::make_early_inc_range(body))
            if (isa<l1::ReshapeOp, l1::ConstOp>(op) && op.use_empty()) {
              op.erase();
              erased = true;
            }
        }
      }
      if (summary && (toProducers || toReaders))
        graph.emitRemark() << toProducers << " elementwise ops moved into their "
                           << "producers' shapes, " << toReaders
                           << " into their readers'";
    });
  }
};

} // namespace
