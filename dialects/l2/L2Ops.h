//===- L2Ops.h - The l2 dialect's operations ----------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L2_OPS_H
#define SYNPL_DIALECT_L2_OPS_H

#include "synpl/Dialect/L2/L2Dialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

namespace synpl::l2 {
// Parameter parsers and printers the attribute definitions use.
mlir::FailureOr<llvm::APFloat> parseF64(mlir::AsmParser &parser);
void printF64(mlir::AsmPrinter &printer, const llvm::APFloat &value);
mlir::FailureOr<bool> parseBool(mlir::AsmParser &parser);
mlir::FailureOr<llvm::SmallVector<int64_t>> parseShape(mlir::AsmParser &parser);
void printShape(mlir::AsmPrinter &printer, llvm::ArrayRef<int64_t> shape);

/// A sample, backward or update method: `adam<lr = 3.0e-4>` (an l2
/// attribute without its `#l2.` prefix) or any attribute in full form.
mlir::FailureOr<mlir::Attribute> parseMethod(mlir::AsmParser &parser);
void printMethod(mlir::AsmPrinter &printer, mlir::Attribute method);

/// What every layer op checks: its result type is what its shape rule gives
/// (row L2.1), and its escape hatches target a layer below L2.
mlir::LogicalResult verifyLayerOp(mlir::Operation *op);

/// The trait of every layer op: runs verifyLayerOp.
template <typename ConcreteType>
class LayerTrait : public mlir::OpTrait::TraitBase<ConcreteType, LayerTrait> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    return verifyLayerOp(op);
  }
};
} // namespace synpl::l2

#include "synpl/Dialect/L2/L2Enums.h.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L2/L2Attrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L2/L2Types.h.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L2/L2Ops.h.inc"

namespace synpl::l2 {
/// Method families: whether an attribute is a sample, backward or update method.
bool isSampleMethod(mlir::Attribute attr);
bool isBackwardMethod(mlir::Attribute attr);
bool isUpdateMethod(mlir::Attribute attr);
} // namespace synpl::l2

#endif // SYNPL_DIALECT_L2_OPS_H
