//===- Emit.h - Building ipu21 graphs from planned kernels ------------*- C++ -*-===//
//
// Private to --synpl-convert-l0uop-to-ipu21: the ops one planned matmul
// becomes (EmitMatmul.cpp) and the placement of every object of a graph in
// each tile's memory (Placement.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOIPU21_EMIT_H
#define SYNPL_LIB_CONVERSION_L0TOIPU21_EMIT_H

#include "KernelPlan.h"
#include "MatmulPlan.h"

#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Dialect/L0UOp/L0UOpMatch.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <functional>
#include <vector>

namespace synpl::l0toipu21 {

/// Sizes of this sink's codelets' code. The codelets are not encoded yet
/// (the simulator runs their semantics), so these are reservations: a
/// ConvPartial1x1Out-sized AMP loop, a vector fill and a vector sum.
inline constexpr int64_t kAmpCodeBytes = 2048;
inline constexpr int64_t kFillCodeBytes = 256;
inline constexpr int64_t kReduceCodeBytes = 512;
/// What code, vertex state and descriptors reserve in the executable region
/// while the planner sizes a product's blocks (Placement.cpp places them).
inline constexpr int64_t kReservedBytes = 8192;

/// A kernel's matrix product C = A . B and its slots, as the AMP takes it.
struct MatmulKernel {
  l0uop::KernelOp kernel;
  MatmulShape shape;
  llvm::StringRef a, b; ///< the operands' slots
  llvm::StringRef c;    ///< C's slot (a bare product's; empty otherwise)
  mlir::Type elem;      ///< the operands' element type
  /// A is stored [K][M] (B [N][K]): it is transposed on the workers before
  /// the AMP reads it (products with an epilogue only).
  bool transA = false, transB = false;
  l0uop::MatmulStructure structure;
};

/// `kernel` as a product the AMP takes (f32, or f16 cast to f32; A and B
/// read row-major), or why not. `bare`: also nothing but C[i, j] = the sum
/// from 0 (a product with an epilogue takes the AMP for its product and
/// the generic codelet for the rest).
mlir::FailureOr<MatmulKernel> analyzeProduct(l0uop::KernelOp kernel, bool bare, std::string &why);

/// Tiles (any order, no repeats) as the flat, merged [first, end) pairs of
/// a tile-range attribute.
inline llvm::SmallVector<int64_t> tileRanges(std::vector<int64_t> tiles) {
  std::sort(tiles.begin(), tiles.end());
  llvm::SmallVector<int64_t> flat;
  for (int64_t t : tiles) {
    if (!flat.empty() && flat.back() == t)
      ++flat.back();
    else
      flat.append({t, t + 1});
  }
  return flat;
}
inline llvm::SmallVector<int64_t> tileRanges(llvm::ArrayRef<int64_t> tiles) {
  return tileRanges(std::vector<int64_t>(tiles.begin(), tiles.end()));
}

/// One planned product: its tensors (made by the caller, C with the plan's
/// grid mapping), the codelets it runs, and the names its objects take.
struct MatmulEmission {
  std::string name;              ///< prefix of the buffers, sets, exchange
  ipu21::TensorOp a, b, c;
  ipu21::CodeletOp amp, fill, reduce;
  MatmulShape shape;
  MatmulPlan plan;
};

/// Adds the product's buffers, compute sets and exchange to the graph at
/// `b`'s insertion point (addresses 0: placeGraph sets them), and its steps
/// (zero C, then per chunk: exchange, sync, AMP, sync) at `steps`.
void emitMatmul(mlir::OpBuilder &b, mlir::Location loc, const MatmulEmission &m,
                mlir::OpBuilder &steps);

/// The `grid` mapping of C for `plan`: [first_tile, mb, nb, column_major].
llvm::SmallVector<int64_t, 4> gridMapping(const MatmulPlan &plan);

/// One planned generic kernel: its model and plan, the tensor each of its
/// buffers' slots lives in (its home), and its codelet.
struct KernelEmission {
  std::string name;
  const KernelModel *model = nullptr;
  KernelPlan plan;
  llvm::SmallVector<ipu21::TensorOp> homes; ///< per body argument
  ipu21::CodeletOp codelet;
  /// The chip's tile that runs the plan's tile 0 (the plan's tiles are
  /// consecutive from it).
  int64_t firstTile = 0;
};

/// A generic codelet `name` with fields `fieldNames`, the first
/// `numInputs` of them inputs, and an empty body region (the caller builds
/// the body, then calls finishUOpCodelet).
ipu21::CodeletOp newUOpCodelet(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef name,
                               llvm::ArrayRef<mlir::Attribute> fieldNames, unsigned numInputs);
/// Sets a generic codelet's code size from its finished body: a
/// reservation (the simulator runs the UOps), 64 bytes and 8 per UOp.
void finishUOpCodelet(ipu21::CodeletOp codelet);

/// The generic codelet that runs `kernel`'s body, named `name`, its fields
/// named after the slots they bind.
ipu21::CodeletOp emitUOpCodelet(mlir::OpBuilder &b, l0uop::KernelOp kernel, llvm::StringRef name);

/// Adds the kernel's buffers, exchanges and compute set to the graph at
/// `b`'s insertion point, and its steps (windows in, sync, compute, sync,
/// windows out, sync) at `steps`. A window that is exactly its tile's piece
/// of the home is bound in place; any other gets a buffer, filled from the
/// home before (an input, or an output the kernel reads or may not write
/// whole) and written back after (an output). Fails, with an error at the
/// kernel, when two tiles' output windows overlap.
mlir::LogicalResult emitKernel(mlir::OpBuilder &b, mlir::Location loc, const KernelEmission &k,
                               mlir::OpBuilder &steps);

/// The home a generic kernel's output gets when it is the first to need
/// one: each tile's window (its runs of the row-major order, in order, so
/// that the window is the tile's piece and the tile writes in place), the
/// elements no window holds spread over the plan's tiles; nullopt when two
/// tiles' windows overlap.
std::optional<llvm::SmallVector<int64_t>> homeFromWindows(const KernelModel &model,
                                                          const KernelPlan &plan, unsigned arg,
                                                          int64_t firstTile);

/// How the pass gives tensors their homes (a slot's tensor is made when a
/// kernel first needs it).
struct Homes {
  /// Whether slot `slot` has its tensor yet.
  std::function<bool(llvm::StringRef slot)> has;
  /// Slot `slot`'s tensor, made spread evenly over the tiles if it has none.
  std::function<ipu21::TensorOp(llvm::StringRef slot)> of;
  /// Makes slot `slot`'s tensor with the intervals `flat` ((tile, begin,
  /// end) triples, any order).
  std::function<ipu21::TensorOp(llvm::StringRef slot, llvm::ArrayRef<int64_t> flat)> make;
  /// Makes a tensor that is no slot (a fold's partials) with the intervals
  /// `flat`, or spread evenly when `flat` is empty.
  std::function<ipu21::TensorOp(llvm::StringRef name, mlir::RankedTensorType type,
                                llvm::ArrayRef<int64_t> flat)>
      makeTensor;
  /// A tensor that is no slot with the `grid` mapping (a product's C).
  std::function<ipu21::TensorOp(llvm::StringRef name, mlir::RankedTensorType type,
                                llvm::ArrayRef<int64_t> grid)>
      makeGridTensor;
  /// The graph's codelet of a fixed kind and types (one per kind and types).
  std::function<ipu21::CodeletOp(ipu21::CodeletKind kind, mlir::Type in, mlir::Type out,
                                 int64_t codeBytes)>
      fixedCodelet;
  /// Where the next kernel's tiles start: kernels on fewer tiles than the
  /// chip's take turns along it, so that no tile holds every kernel's code,
  /// state and descriptors.
  int64_t *nextTile = nullptr;
  int64_t chipTiles = 0;
};

/// A generic codelet that transposes a [rows][cols] matrix stored in a
/// buffer of type `src` (row-major, any rank) into a [cols][rows] one,
/// named `name`.
ipu21::CodeletOp emitTransposeCodelet(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef name,
                                      l0uop::BufType src, int64_t rows, int64_t cols);

/// Lowers `kernel` onto the generic codelet: in one stage, or its fold in
/// two when the search finds that faster or the only fit (GenericKernel.cpp).
/// Its codelets, buffers, exchanges and compute sets go at `items`, its
/// steps at `steps`. Fails, with the search's error at the kernel, when no
/// plan fits.
mlir::LogicalResult lowerGenericKernel(mlir::OpBuilder &items, mlir::OpBuilder &steps,
                                       l0uop::KernelOp kernel, const ipu21::Facts &facts,
                                       const TileBudget &budget, const Homes &homes);

/// Places every object of `graph` (code, vertex state, descriptors, tensors,
/// buffers) at one address per object in the tiles' memory: code and the
/// inputs an AMP must keep apart from its output in the executable region,
/// the fields that need interleaved memory in the interleaved region, the
/// rest where room is left. Fails with an error on the graph when a region
/// overflows.
mlir::LogicalResult placeGraph(ipu21::GraphOp graph);

} // namespace synpl::l0toipu21

#endif // SYNPL_LIB_CONVERSION_L0TOIPU21_EMIT_H
