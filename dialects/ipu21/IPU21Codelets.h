//===- IPU21Codelets.h - What each codelet kind declares -------------*- C++ -*-===//
//
// The contract of each `ipu21.codelet` kind, as poplibs' codelet classes
// declare theirs: the fields in order (direction, element type, alignment,
// whether the field must lie in interleaved memory), the `elem(a) != elem(b)`
// constraints between fields, the parameters, how many elements each field
// binds, and the trip count of the codelet's zero-overhead loop. The
// verifier checks vertices against it; the translation to a program file
// writes fields and parameters in its order.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_IPU21_CODELETS_H
#define SYNPL_DIALECT_IPU21_CODELETS_H

#include "synpl/Dialect/IPU21/IPU21Ops.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace synpl::ipu21 {

struct FieldSpec {
  llvm::StringLiteral name;
  bool output;        ///< written by the codelet
  bool ofOutType;     ///< element type: the codelet's out_type (else in_type)
  int64_t align;      ///< byte alignment; 0: the element's size
  bool interleaved;   ///< must lie in the interleaved region
};

struct CodeletSpec {
  llvm::ArrayRef<FieldSpec> fields;
  llvm::ArrayRef<llvm::StringLiteral> params;
  /// Pairs of field indices whose bytes must lie in different memory elements.
  llvm::ArrayRef<std::pair<unsigned, unsigned>> distinctElements;
};

const CodeletSpec &codeletSpec(CodeletKind kind);

/// The elements field `field` binds for parameters `param(name)`.
int64_t expectedFieldElements(CodeletKind kind, unsigned field,
                              llvm::function_ref<int64_t(llvm::StringRef)> param);

/// The trip count of the codelet's `rpt` loop for those parameters, with
/// `vectorLanes` elements of the out type per 64-bit vector.
int64_t rptTripCount(CodeletKind kind, llvm::function_ref<int64_t(llvm::StringRef)> param,
                     int64_t vectorLanes);

/// Bytes of one element of `type` (f32, f16, FP8, i32, i8/ui8); nullopt for
/// a type no ipu21 object holds.
std::optional<int64_t> elementBytes(mlir::Type type);

/// Whether `type` is an FP8 type (f8E4M3FN, f8E5M2).
bool isFP8(mlir::Type type);

//===----------------------------------------------------------------------===//
// The generic codelet (kind uop): IPU21UOpCodelet.cpp
//===----------------------------------------------------------------------===//

/// The parallel RANGEs (`over` a launch axis) of a uop codelet's body, in
/// body order: parallel slot i is the i-th.
llvm::SmallVector<l0uop::RangeOp> parallelRanges(CodeletOp codelet);

/// The parameters a uop codelet's vertices take, in order: `p<i>_lo`,
/// `p<i>_hi` per parallel RANGE, then `<field>_lo<d>`, `<field>_ext<d>` per
/// field and dimension.
llvm::SmallVector<std::string> uopParamNames(CodeletOp codelet);

/// Whether an object of element type `object` can hold a uop field of
/// buffer element type `field`: the same type, or any 8-bit integer for an
/// i1 buffer (a tile stores a flag in a byte).
bool fieldStorageMatches(mlir::Type field, mlir::Type object);

/// Types a tile computes in (a uop codelet's values): f32, f16, index, i1,
/// i8, i32, i64.
bool isTileValueType(mlir::Type type);
/// Element types a tile stores a uop codelet's buffer of: f32, f16, i1 (a
/// byte each), 8-bit and 32-bit integers.
bool isTileBufferElement(mlir::Type type);
/// Whether `op` is a UOp a tile's worker cannot run: block-level
/// cooperation (BARRIER), escapes (CUSTOM), WMMA and vector lanes.
bool isNonTileUOp(mlir::Operation &op);

/// Row IPU.11 on a uop codelet's body (its region verifier).
mlir::LogicalResult verifyUOpCodeletBody(CodeletOp codelet);

} // namespace synpl::ipu21

#endif // SYNPL_DIALECT_IPU21_CODELETS_H
