//===- Footprint.h - What a kernel touches on one tile -------------*- C++ -*-===//
//
// The ipu21 sink runs a generic kernel on several tiles, each over a slice
// of the kernel's parallel RANGEs (a box: a sub-range of each). To place the
// data a tile needs there, the sink needs each buffer's *window* for a
// slice: the box of the buffer's index space the slice's INDEXes can reach.
// It is computed by interval arithmetic over the index expressions (a
// parallel RANGE takes its slice's values, a loop RANGE all of its own,
// constants themselves; ADD, MUL, NEG, MAX, DIV and MOD by a positive
// constant, CAST between integers combine them); an index the arithmetic
// cannot bound (a loaded value, a WHERE) spans its whole dimension.
//
// The same model counts the instructions a slice issues (the simulator's
// count: CostModel.h), for the planner's estimate.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOIPU21_FOOTPRINT_H
#define SYNPL_LIB_CONVERSION_L0TOIPU21_FOOTPRINT_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace synpl::l0toipu21 {

/// A box of a buffer's index space: [lo[d], lo[d] + ext[d]) per dimension.
/// An empty window (no access) has no dimensions.
struct Window {
  llvm::SmallVector<int64_t, 4> lo, ext;
  bool empty() const { return ext.empty(); }
  int64_t elements() const;
  bool intersects(const Window &other) const;
  /// Whether its elements are one run of the row-major buffer of `shape`:
  /// every dimension after the first one with more than one index is whole.
  bool contiguous(llvm::ArrayRef<int64_t> shape) const;
  /// The row-major flat index of its first element in a buffer of `shape`.
  int64_t flatBegin(llvm::ArrayRef<int64_t> shape) const;
  bool operator==(const Window &o) const { return lo == o.lo && ext == o.ext; }
};

/// A slice of the parallel RANGEs: iterations [first[i], last[i]) of
/// parallel RANGE i (in trip units: value = lower + step * iteration).
struct Slice {
  llvm::SmallVector<int64_t, 3> first, last;
  int64_t iterations() const;
};

/// The model of one kernel's body that the planner and the emitter read.
class KernelModel {
public:
  /// The model of a UOp body whose first `numInputs` buffers are inputs
  /// (an l0uop.kernel's, or a generic codelet's). Fails, with `why`, for a
  /// body the generic codelet cannot run (the codelet's IPU.11 list:
  /// vectors, BARRIER, CUSTOM, WMMA, buffers of types a tile does not
  /// store, a REDUCE whose init comes after its RANGE).
  static std::optional<KernelModel> build(mlir::Block &body, unsigned numInputs,
                                          std::string &why);

  mlir::Block *body = nullptr;
  unsigned numInputs = 0;
  unsigned numArgs() const { return body->getNumArguments(); }
  /// Buffer `arg`'s shape and bytes per element.
  llvm::ArrayRef<int64_t> shapeOf(unsigned arg) const;
  int64_t elemBytesOf(unsigned arg) const;
  /// The parallel RANGEs in body order, and their trip counts.
  llvm::SmallVector<l0uop::RangeOp, 3> parallel;
  llvm::SmallVector<int64_t, 3> trips;

  /// The whole iteration space.
  Slice whole() const;
  /// Buffer `arg`'s window for `slice` (empty when the body never indexes it).
  Window window(unsigned arg, const Slice &slice) const;
  /// The instructions one worker running `slice` issues (both arms of an IF
  /// counted).
  int64_t instructions(const Slice &slice) const;
  /// Whether the kernel reads buffer `arg` (a LOAD through it).
  bool reads(unsigned arg) const { return readArgs.contains(arg); }
  /// Whether each slice's STOREs to output `arg` write every element of its
  /// window: one STORE, outside any IF, each index a distinct unit-step
  /// RANGE's value (plus a constant), so the window is exactly what it
  /// writes.
  bool storesCoverWindow(unsigned arg) const { return coveringStores.contains(arg); }

private:
  struct Access {
    unsigned arg;
    llvm::SmallVector<mlir::Value, 4> indices;
  };
  llvm::SmallVector<Access> accesses;
  /// Each UOp with the instructions it issues per run and the RANGEs around it.
  struct Cost {
    int64_t perRun;
    llvm::SmallVector<int, 4> ranges; ///< indices into loopTrips / parallel (negative: -1-i)
  };
  llvm::SmallVector<Cost> costs;
  llvm::SmallVector<int64_t> loopTrips;
  llvm::DenseSet<unsigned> readArgs, coveringStores;
};

} // namespace synpl::l0toipu21

#endif // SYNPL_LIB_CONVERSION_L0TOIPU21_FOOTPRINT_H
