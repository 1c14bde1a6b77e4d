//===- AutodiffRules.h - Forward and VJP rules of the l2 layers -*- C++ -*-===//
//
// Private to backward expansion (Autodiff.cpp). `Emitter` writes l1 tensor
// ops (f32, static shapes) into the tensor graph's body; `lowerForward` and
// `lowerBackward` hold one forward rule and one vector-Jacobian product per
// l2 layer op. A rule works on the L1 values of one *instance* of a layer (a
// recurrent cell is instantiated once per step), so the residuals it saves
// for the backward pass are per instance.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L2TOL1_AUTODIFFRULES_H
#define SYNPL_LIB_CONVERSION_L2TOL1_AUTODIFFRULES_H

#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

namespace synpl::l2tol1::detail {

/// Writes l1 tensor ops at a builder's insertion point. Float values are
/// f32; constants are cached per (value, shape) so that a graph holds one
/// `l1.const 0.5 : tensor<f32>` however many rules ask for it.
class Emitter {
public:
  explicit Emitter(mlir::OpBuilder &builder);

  mlir::OpBuilder &builder() { return b; }
  /// Where the next ops are located (the l2 op they come from).
  void setLoc(mlir::Location l) { loc = l; }
  mlir::Location getLoc() const { return loc; }

  mlir::Type f32() const { return f32Type; }
  mlir::RankedTensorType type(llvm::ArrayRef<int64_t> shape) const;
  mlir::RankedTensorType type(llvm::ArrayRef<int64_t> shape, mlir::Type element) const;
  static llvm::ArrayRef<int64_t> shape(mlir::Value v);
  static int64_t numel(mlir::Value v);

  mlir::Value cst(double value, llvm::ArrayRef<int64_t> shape = {});
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value sub(mlir::Value a, mlir::Value b);
  mlir::Value mul(mlir::Value a, mlir::Value b);
  mlir::Value div(mlir::Value a, mlir::Value b);
  mlir::Value max(mlir::Value a, mlir::Value b);
  mlir::Value exp(mlir::Value a);
  mlir::Value log(mlir::Value a);
  mlir::Value sqrt(mlir::Value a);
  mlir::Value reciprocal(mlir::Value a);
  mlir::Value tanh(mlir::Value a);
  mlir::Value abs(mlir::Value a);
  mlir::Value sign(mlir::Value a);
  /// a * c (a rank-0 constant); returns `a` itself for c == 1.
  mlir::Value scale(mlir::Value a, double c);
  /// a * s for a rank-0 value s.
  mlir::Value scale(mlir::Value a, mlir::Value s);
  /// [m, k] x [k, n], or batched [b..., m, k] x [b..., k, n].
  mlir::Value matmul(mlir::Value a, mlir::Value b);
  mlir::Value transpose(mlir::Value a);
  /// result dim i = input dim perm[i].
  mlir::Value permute(mlir::Value a, llvm::ArrayRef<int64_t> perm);
  /// Trailing-aligned broadcast, or with `dims` (input dim i -> output dims[i]).
  mlir::Value broadcast(mlir::Value a, llvm::ArrayRef<int64_t> shape,
                        std::optional<llvm::ArrayRef<int64_t>> dims = std::nullopt);
  /// The same value when the shape already matches.
  mlir::Value reshape(mlir::Value a, llvm::ArrayRef<int64_t> shape);
  /// Sum over `axis`, or over all axes to a scalar.
  mlir::Value sum(mlir::Value a, std::optional<int64_t> axis = std::nullopt);
  mlir::Value rowMax(mlir::Value a, int64_t axis);
  mlir::Value cmp(l1::CmpPredicate predicate, mlir::Value a, mlir::Value b);
  mlir::Value select(mlir::Value cond, mlir::Value a, mlir::Value b);
  mlir::Value cast(mlir::Value a, mlir::Type element);
  mlir::Value oneHot(mlir::Value labels, int64_t classes);
  /// Rows of `table` [V, D] at integer `ids` (l1.gather): ids' shape ++ [D].
  mlir::Value gather(mlir::Value table, mlir::Value ids);
  /// Tensor parallelism: the ranks' blocks concatenated along `axis`, the
  /// sum over the ranks, block `index` along `axis` (of `ranks`).
  mlir::Value allGather(mlir::Value x, int64_t axis, int64_t ranks);
  mlir::Value allSum(mlir::Value x);
  mlir::Value blockSlice(mlir::Value x, mlir::Value index, int64_t axis, int64_t ranks);
  /// `src` (ids' shape ++ [D]) summed into `rows` rows at `ids`
  /// (l1.scatter_add): [rows, D].
  mlir::Value scatterAdd(mlir::Value src, mlir::Value ids, int64_t rows);
  /// Uniform draws in [0, 1) of `shape` (l1.random) at the rank-0 counter.
  mlir::Value random(mlir::Value counter, int64_t seed, int64_t stream,
                     llvm::ArrayRef<int64_t> shape);
  /// The sliding windows of an [N, C, I...] tensor, [N, O..., C, K...]
  /// (l1.unfold), and their sum back onto `shape` (l1.fold). Channels
  /// last: of an [N, I..., C] tensor, [N, O..., K..., C].
  mlir::Value unfold(mlir::Value x, llvm::ArrayRef<int64_t> kernel,
                     llvm::ArrayRef<int64_t> stride, llvm::ArrayRef<int64_t> padding,
                     bool channelsLast = false);
  mlir::Value fold(mlir::Value windows, llvm::ArrayRef<int64_t> shape,
                   llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> stride,
                   llvm::ArrayRef<int64_t> padding, bool channelsLast = false);
  /// Row `index` of the n x n identity, [1, n] f32 (one_hot of an integer
  /// constant): selects or places column `index` of a [rows, n] matrix.
  mlir::Value unitRow(int64_t index, int64_t n);
  /// [0, 1, ..., n-1] as f32 [n]. L1's constants are splats, so it is built
  /// from one-hot rows: iota(a*b) = a-digit * b + b-digit over an [a, b]
  /// grid, recursively over the prime factors of n (O(log n) ops for a
  /// power of two, O(p) for a prime factor p).
  mlir::Value iota(int64_t n);
  mlir::Value windowRead(mlir::SymbolRefAttr window, llvm::StringRef field,
                         llvm::ArrayRef<int64_t> shape);

  /// Rows of a [R, C] matrix broadcast back over the columns: [R] -> [R, C].
  mlir::Value rowsBroadcast(mlir::Value r, llvm::ArrayRef<int64_t> shape2d) {
    return broadcast(r, shape2d, llvm::ArrayRef<int64_t>{0});
  }

private:
  template <typename OpT, typename... Args> mlir::Value create(mlir::Type result, Args &&...args) {
    return OpT::create(b, loc, result, std::forward<Args>(args)...).getResult();
  }

  mlir::OpBuilder &b;
  mlir::Location loc;
  mlir::Type f32Type;
  std::map<std::pair<uint64_t, std::string>, mlir::Value> constants;
  std::map<std::pair<int64_t, int64_t>, mlir::Value> unitRows;
  std::map<int64_t, mlir::Value> iotas;
};

/// One lowered instance of an l2 layer op.
struct Instance {
  mlir::Operation *op = nullptr;
  /// The L1 values of the op's operands and its parameters (window reads).
  llvm::SmallVector<mlir::Value, 2> inputs;
  llvm::SmallVector<mlir::Value, 4> params;
  mlir::Value output;
  /// What the VJP reads, as the forward rule left it.
  llvm::SmallVector<mlir::Value, 8> saved;
  /// A layer that draws random numbers (dropout with p > 0): the draws'
  /// counter (the update step), the train/eval flag (rank-0 window reads)
  /// and the instance's own stream.
  mlir::Value counter, training;
  int64_t stream = 0;
  /// A linear split over `ranks` ranks (tensor parallelism): its params
  /// are this rank's blocks (of columns; with `byRows`, of the weight's
  /// rows), and `rank` (a rank-0 window read) names the block. Megatron's
  /// pairing: `blockOut`, a column split's output stays the rank's block;
  /// `blockIn`, a row split's input is the rank's block already.
  mlir::Value rank;
  int64_t ranks = 1;
  bool byRows = false, blockIn = false, blockOut = false;
  /// Channels last (between the layers of a convolution stack): the input
  /// (`inLast`) or the output (`outLast`) holds [N, spatial..., C] where
  /// the layer's types say [N, C, spatial...], and so does its gradient.
  /// Only convolutions, activations and pooling take them
  /// (channelsLastLayer); the driver decides (Autodiff.cpp).
  bool inLast = false, outLast = false;
};

/// Whether `op` computes in either layout (conv, act, pool on a tensor of
/// rank 3 or more, without a user kernel, which computes channels first):
/// the layers a channels-last value may flow between.
bool channelsLastLayer(mlir::Operation *op);

/// `#[l0::kernel("file"[, "function" | "function(types) -> type"])]` on a
/// layer (UserKernel.cpp).
struct UserKernelHint {
  std::string file, symbol;
  std::optional<std::string> boundary;
};
/// Whether the layer names a user kernel (#[l0::kernel], well formed or
/// not); says nothing.
bool hasUserKernelHint(mlir::Operation *layer);
/// The layer's user-kernel hatch, if it has one; failure (reported) for a
/// malformed one.
mlir::FailureOr<std::optional<UserKernelHint>> userKernelHint(mlir::Operation *layer);
/// An l1.kernel_call of the hatch's function on `operands` (the layer's
/// inputs, then its parameters), at the emitter's location.
mlir::Value emitUserKernel(Emitter &e, const UserKernelHint &hint, mlir::ValueRange operands,
                           mlir::Type result);

/// The seed of every draw of a training graph (streams tell layers apart).
inline constexpr int64_t kRandomSeed = 0;

/// Whether backward expansion has a rule for `op` (a layer op; region ops
/// are handled by the driver). When not, `why` says why.
bool hasRule(mlir::Operation *op, std::string &why);

/// The forward rule: computes `inst.output` from `inst.inputs` and
/// `inst.params` and fills `inst.saved`.
void lowerForward(Emitter &e, Instance &inst);

/// The VJP: given d loss / d output, returns d loss / d input for each input
/// whose `needInput` is set (null otherwise) and d loss / d param for every
/// parameter of the instance.
void lowerBackward(Emitter &e, const Instance &inst, mlir::Value dOutput,
                   llvm::ArrayRef<bool> needInput, llvm::SmallVectorImpl<mlir::Value> &dInputs,
                   llvm::SmallVectorImpl<mlir::Value> &dParams);

/// Log-softmax over the last dimension of a 2-D [R, n] matrix: fills
/// rowmax (broadcast to [R, n]) and logp.
struct LogSoftmax {
  mlir::Value rowMaxB;
  mlir::Value logp;
};
LogSoftmax logSoftmax(Emitter &e, mlir::Value logits2d);

/// The layer norm epsilon (all norm kinds): variance + 1e-5.
inline constexpr double kNormEps = 1e-5;

} // namespace synpl::l2tol1::detail

#endif // SYNPL_LIB_CONVERSION_L2TOL1_AUTODIFFRULES_H
