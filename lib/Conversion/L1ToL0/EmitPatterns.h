//===- EmitPatterns.h - One emission pattern per L1 op family -*- C++ -*-===//
//
// The compute path of the L1 -> L0 lowering builds each kernel's UOp body by
// evaluating L1 values at an index: the value of a tensor op's result at
// `idx` (one index per result dimension) is a scalar UOp expression of its
// operands' values at indices the op derives from `idx`. What an op computes
// lives in its emission pattern, one file per op family under Patterns/:
//
//   Arithmetic.cpp  add sub mul scale div max min neg abs sign
//   Math.cpp        exp log sqrt reciprocal tanh cos
//   Logic.cpp       cmp select cast one_hot
//   Indexed.cpp     gather scatter_add (rows at data-dependent indices)
//   Movement.cpp    broadcast transpose reshape (index maps, no arithmetic
//                   on values)
//   Matmul.cpp      matmul (a loop over k folded by REDUCE)
//   Reduce.cpp      reduce_sum reduce_mean reduce_max
//   Window.cpp      unfold fold (a convolution as a matmul: im2col, col2im)
//   Random.cpp      random (counter-based draws, computed where consumed)
//
// A pattern also says why it cannot take an op (a type it has no lowering
// for), which the pass reports before anything is emitted. Adding an op to
// the lowering means adding a pattern; the grouping into kernels reads only
// its kind (elementwise ops fuse, reductions and gathers open a kernel,
// a scatter has a kernel to itself, movement is free).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L1TOL0_EMITPATTERNS_H
#define SYNPL_LIB_CONVERSION_L1TOL0_EMITPATTERNS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace synpl::l1tol0 {

struct Slot;
class EmitPatternSet;

/// How an op takes part in kernel formation.
enum class OpKind {
  /// Computed per element at the result's index; fuses with its neighbours.
  Elementwise,
  /// Loops over an input (matmul, reductions): opens a kernel and reads its
  /// operands from memory.
  Reduction,
  /// Reads its operand at another index; no kernel of its own.
  Movement,
  /// Reads an operand at indices loaded from another (a table's rows):
  /// opens a kernel and reads its operands from memory, like a reduction,
  /// and its elementwise consumers fuse after it.
  Gather,
  /// Writes its result at indices loaded from an operand (rows summed into
  /// a table): a kernel of its own, parallel over the result's last
  /// dimension, that stores the whole result itself (EmitPattern::emit
  /// gets the lane index and returns no value); its consumers read the
  /// result from memory.
  Scatter,
  /// A user-supplied kernel (l1.kernel_call): a kernel of its own, with its
  /// operands and result in dense buffers and no UOps (EmitPattern::emit is
  /// never called); nothing fuses with it.
  Custom,
};

/// The builder of one kernel body: what emission patterns build UOps with.
class KernelBuilder {
public:
  KernelBuilder(mlir::OpBuilder &b, mlir::Location loc, const EmitPatternSet &patterns,
                const llvm::DenseMap<mlir::Value, Slot *> &slotOf,
                const llvm::DenseSet<mlir::Operation *> &inlined,
                llvm::DenseMap<Slot *, mlir::Value> &args)
      : b(b), loc(loc), patterns(patterns), slotOf(slotOf), inlined(inlined), args(args) {}

  // Constants and UOps.
  mlir::Value index(int64_t v);
  mlir::Value constant(mlir::Type t, double v);
  mlir::Value negInf(mlir::Type t);
  template <typename OpT> mlir::Value op(mlir::Type t, mlir::ValueRange src) {
    return OpT::create(b, loc, t, src);
  }

  // Index arithmetic.
  /// Row-major linear index of `idx` in `shape`.
  mlir::Value linearize(llvm::ArrayRef<mlir::Value> idx, llvm::ArrayRef<int64_t> shape);
  /// The row-major coordinates in `shape` of the linear index `flat`.
  llvm::SmallVector<mlir::Value> delinearize(mlir::Value flat, llvm::ArrayRef<int64_t> shape);
  /// The coordinates in `in` of the element at `idx` of its reshape to `out`.
  llvm::SmallVector<mlir::Value> reshapeIndex(llvm::ArrayRef<mlir::Value> idx,
                                              llvm::ArrayRef<int64_t> out,
                                              llvm::ArrayRef<int64_t> in);
  /// Whether `v` can be read at one linear index (a reshape passes it on; a
  /// buffer stored flat takes it).
  bool takesFlatIndex(mlir::Value v) const;

  // Values.
  /// The scalar value of `v` at `idx` (one index per dimension of v; or one
  /// linear index when `flatIdx`).
  mlir::Value eval(mlir::Value v, llvm::ArrayRef<mlir::Value> idx, bool flatIdx = false);
  /// Operand `i` of an elementwise op, read at the op's result index `idx`
  /// (a one-element operand is read at its only element).
  mlir::Value operand(mlir::Operation *op, unsigned i, llvm::ArrayRef<mlir::Value> idx);
  /// The value of `op`'s result at `idx`, built by its pattern.
  mlir::Value emitOp(mlir::Operation *op, llvm::ArrayRef<mlir::Value> idx);
  /// The address of element `idx` of slot `s` in this kernel.
  mlir::Value pointer(Slot *s, llvm::ArrayRef<mlir::Value> idx, bool flatIdx);
  /// The address of element `idx` of the buffer of the L1 value `v` (a
  /// scatter's own result).
  mlir::Value address(mlir::Value v, llvm::ArrayRef<mlir::Value> idx);

  // Loops. Values evaluated inside a loop are not reused after its END.
  /// Opens a sequential RANGE over [0, trip).
  mlir::Value beginLoop(int64_t trip);
  /// Closes the RANGE `range` (its REDUCEs follow).
  void endLoop(mlir::Value range);

  /// The views stored by copy kernels (by the kernel's group id) and this
  /// kernel's group: it reads a stored view from its slot only when the
  /// copy ran before it.
  void setStoredViews(const llvm::DenseMap<mlir::Value, unsigned> *views, unsigned group) {
    storedViews = views;
    groupId = group;
  }
  bool readsStored(mlir::Value v) const {
    if (!storedViews)
      return false;
    auto it = storedViews->find(v);
    return it != storedViews->end() && it->second < groupId;
  }

  mlir::OpBuilder &b;
  mlir::Location loc;
  /// Values this kernel computed, by L1 value (read at the kernel's index).
  llvm::DenseMap<mlir::Value, mlir::Value> regs;
  /// Set when a value the kernel reads has no buffer.
  bool broken = false;

private:
  mlir::Value evalUncached(mlir::Value v, llvm::ArrayRef<mlir::Value> idx, bool flatIdx);

  const EmitPatternSet &patterns;
  const llvm::DenseMap<mlir::Value, Slot *> &slotOf;
  const llvm::DenseSet<mlir::Operation *> &inlined;
  llvm::DenseMap<Slot *, mlir::Value> &args;
  const llvm::DenseMap<mlir::Value, unsigned> *storedViews = nullptr;
  unsigned groupId = ~0u;
  int loopDepth = 0;
  struct CacheKey {
    const void *value;
    std::vector<const void *> idx;
    bool flat;
    bool operator<(const CacheKey &o) const;
  };
  std::map<CacheKey, mlir::Value> cache;
};

/// The tensor type of a value of a tensor graph or handler.
inline mlir::RankedTensorType tensorOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

/// Why an elementwise op's operands cannot be read at its result's index:
/// an operand of another shape that is not one element ("" when none).
std::string elementwiseOperandsWhyNot(mlir::Operation *op);
/// Whether the value `v` has a float element type.
bool hasFloatElements(mlir::Value v);

/// How one L1 op becomes UOps.
class EmitPattern {
public:
  EmitPattern(llvm::StringRef rootName, OpKind kind, mlir::MLIRContext *ctx)
      : rootName(rootName, ctx), kind(kind) {}
  virtual ~EmitPattern() = default;

  mlir::OperationName getRootName() const { return rootName; }
  OpKind getKind() const { return kind; }

  /// Why `op` cannot be emitted, or "" when it can. Asked of every op
  /// before anything is emitted.
  virtual std::string whyNot(mlir::Operation *op) const = 0;
  /// The value of `op`'s result at `idx`.
  virtual mlir::Value emit(KernelBuilder &k, mlir::Operation *op,
                           llvm::ArrayRef<mlir::Value> idx) const = 0;

private:
  mlir::OperationName rootName;
  OpKind kind;
};

/// A pattern for one op class.
template <typename OpT> class OpEmitPattern : public EmitPattern {
public:
  OpEmitPattern(mlir::MLIRContext *ctx, OpKind kind)
      : EmitPattern(OpT::getOperationName(), kind, ctx) {}

  std::string whyNot(mlir::Operation *op) const final { return check(llvm::cast<OpT>(op)); }
  mlir::Value emit(KernelBuilder &k, mlir::Operation *op,
                   llvm::ArrayRef<mlir::Value> idx) const final {
    return build(k, llvm::cast<OpT>(op), idx);
  }

  /// By default an elementwise op reads operands of its result's shape or
  /// of one element; other kinds take anything their op verifies.
  virtual std::string check(OpT op) const {
    return getKind() == OpKind::Elementwise ? elementwiseOperandsWhyNot(op) : "";
  }
  /// The value of `op`'s result at `idx`.
  virtual mlir::Value build(KernelBuilder &k, OpT op, llvm::ArrayRef<mlir::Value> idx) const = 0;
};

/// The patterns of one lowering, by root op.
class EmitPatternSet {
public:
  explicit EmitPatternSet(mlir::MLIRContext *ctx) : ctx(ctx) {}

  template <typename... Ps> EmitPatternSet &add() {
    (insert(std::make_unique<Ps>(ctx)), ...);
    return *this;
  }
  /// The pattern of `op`, or null when it has none.
  const EmitPattern *lookup(mlir::Operation *op) const {
    auto it = patterns.find(op->getName());
    return it == patterns.end() ? nullptr : it->second.get();
  }
  bool is(mlir::Operation *op, OpKind kind) const {
    const EmitPattern *p = lookup(op);
    return p && p->getKind() == kind;
  }
  mlir::MLIRContext *getContext() const { return ctx; }

private:
  void insert(std::unique_ptr<EmitPattern> p);

  mlir::MLIRContext *ctx;
  llvm::DenseMap<mlir::OperationName, std::unique_ptr<EmitPattern>> patterns;
};

void populateArithmeticEmitPatterns(EmitPatternSet &patterns);
void populateMathEmitPatterns(EmitPatternSet &patterns);
void populateLogicEmitPatterns(EmitPatternSet &patterns);
void populateIndexedEmitPatterns(EmitPatternSet &patterns);
void populateMovementEmitPatterns(EmitPatternSet &patterns);
void populateMatmulEmitPatterns(EmitPatternSet &patterns);
void populateReduceEmitPatterns(EmitPatternSet &patterns);
void populateWindowEmitPatterns(EmitPatternSet &patterns);
void populateRandomEmitPatterns(EmitPatternSet &patterns);
void populateCustomEmitPatterns(EmitPatternSet &patterns);
/// Every pattern of the L1 -> L0 lowering.
void populateL1ToL0EmitPatterns(EmitPatternSet &patterns);

} // namespace synpl::l1tol0

#endif // SYNPL_LIB_CONVERSION_L1TOL0_EMITPATTERNS_H
