//===- Emit.h - Building ipu21 graphs from planned kernels ------------*- C++ -*-===//
//
// Private to --synpl-convert-l0uop-to-ipu21: the ops one planned matmul
// becomes (EmitMatmul.cpp) and the placement of every object of a graph in
// each tile's memory (Placement.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOIPU21_EMIT_H
#define SYNPL_LIB_CONVERSION_L0TOIPU21_EMIT_H

#include "MatmulPlan.h"

#include "synpl/Dialect/IPU21/IPU21Ops.h"

#include "mlir/IR/Builders.h"

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

/// Places every object of `graph` (code, vertex state, descriptors, tensors,
/// buffers) at one address per object in the tiles' memory: code and the
/// inputs an AMP must keep apart from its output in the executable region,
/// the fields that need interleaved memory in the interleaved region, the
/// rest where room is left. Fails with an error on the graph when a region
/// overflows.
mlir::LogicalResult placeGraph(ipu21::GraphOp graph);

} // namespace synpl::l0toipu21

#endif // SYNPL_LIB_CONVERSION_L0TOIPU21_EMIT_H
