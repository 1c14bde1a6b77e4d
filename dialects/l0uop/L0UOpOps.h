//===- L0UOpOps.h - The l0uop dialect's operations ----------------*- C++ -*-===//
#ifndef SYNPL_DIALECT_L0UOP_OPS_H
#define SYNPL_DIALECT_L0UOP_OPS_H

#include "synpl/Dialect/L0UOp/L0UOpDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>
#include <unordered_map>

#include "synpl/Dialect/L0UOp/L0UOpEnums.h.inc"

namespace synpl::l0uop {
/// Marks an op whose single-block region holds a UOp body (l0uop.kernel, a
/// sink's generic codelet). The op's own verifier checks the body's
/// structure with verifyUOpBody.
template <typename ConcreteType>
class UOpScope : public mlir::OpTrait::TraitBase<ConcreteType, UOpScope> {};

/// Marks a UOp: it sits directly in the body of a UOpScope op.
template <typename ConcreteType>
class InUOpScope : public mlir::OpTrait::TraitBase<ConcreteType, InUOpScope> {
public:
  static mlir::LogicalResult verifyTrait(mlir::Operation *op) {
    mlir::Operation *parent = op->getParentOp();
    if (!parent || !parent->hasTrait<UOpScope>())
      return op->emitOpError("expects parent op to hold a UOp body ('l0uop.kernel' or "
                             "a generic codelet), got ")
             << (parent ? parent->getName().getStringRef() : llvm::StringRef("none"));
    return mlir::success();
  }
};
} // namespace synpl::l0uop
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpTypes.h.inc"
#define GET_OP_CLASSES
#include "synpl/Dialect/L0UOp/L0UOpOps.h.inc"

namespace synpl::l0uop {
/// What a UOp body's owner tells verifyUOpBody about the body.
struct UOpBodyContract {
  /// The leading block arguments that are inputs (no STORE may reach them).
  unsigned numInputs = 0;
  /// How many iterations a parallel RANGE of `kind` may have; nullopt for
  /// no limit (and for `loop`).
  llvm::function_ref<std::optional<int64_t>(RangeKind kind)> parallelLimit;
  /// Appends to an error what bounds the parallel RANGEs (e.g. the launch).
  llvm::function_ref<void(mlir::InFlightDiagnostic &)> describeLimit;
  /// Appends to an error the name of input `i` (e.g. the slot it binds).
  llvm::function_ref<void(mlir::InFlightDiagnostic &, unsigned i)> describeInput;
};

/// Row L0.1's checks of a UOp body (the single block of a UOpScope op):
/// only UOps; RANGE/END and IF/ENDIF nest; values are used only inside the
/// scope that defines them (but a REDUCE reads its range's body); REDUCE
/// after its RANGE in the enclosing scope; parallel RANGEs not nested over
/// one axis and within `parallelLimit`; no BARRIER under an IF; no STORE
/// into an input.
mlir::LogicalResult verifyUOpBody(mlir::Block &body, const UOpBodyContract &contract);

/// The work a kernel does, counted statically over its UOps: each UOp
/// times the trip counts of the RANGEs around it (both branches of an IF
/// counted as taken).
struct KernelWork {
  /// Float arithmetic, per lane: ADD MUL NEG RECIPROCAL MAX DIV EXP2 LOG2
  /// SIN SQRT one flop, MULACC two, a float REDUCE one per iteration of its
  /// RANGE, WMMA 2*M*N*K.
  double flops = 0;
  /// Bytes of the buffers the kernel binds (inputs and outputs): what it
  /// must move at least, each once.
  double bytesTouched = 0;
  /// Bytes every LOAD and STORE moves, with no reuse.
  double bytesAccessed = 0;
  /// False when a CUSTOM UOp's work is not counted.
  bool complete = true;
};
KernelWork computeKernelWork(KernelOp kernel);

/// The kernels seen so far, by the hash of their code: finds an earlier
/// kernel with the same code (KernelOp::hasSameCode), for lowerings that
/// compile such kernels once.
class KernelsByCode {
public:
  /// The value recorded with an earlier kernel that has `kernel`'s code;
  /// when there is none, records `kernel` with `value` and returns nothing.
  /// `planSymbols` (the symbol table of `kernel`'s plan) must outlive this.
  std::optional<size_t> findOrAdd(KernelOp kernel, mlir::SymbolTable &planSymbols,
                                  size_t value);

private:
  struct Entry {
    KernelOp kernel;
    mlir::SymbolTable *planSymbols;
    size_t value;
  };
  std::unordered_map<size_t, llvm::SmallVector<Entry, 1>> byHash;
};

/// The value of `v` where a CONST of an integer (or index) type defines it.
std::optional<int64_t> integerConstant(mlir::Value v);

/// Whether `op`, a DIV or MOD, divides by a non-zero integer constant: it
/// cannot trap, so the tiled lowerings may evaluate it on masked-off lanes
/// too (a random draw's half swap, an index split).
bool dividesByNonZeroConstant(mlir::Operation *op);
} // namespace synpl::l0uop

#endif // SYNPL_DIALECT_L0UOP_OPS_H
