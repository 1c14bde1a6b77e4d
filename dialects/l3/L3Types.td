//===- L3Types.td - The l3 dialect's domain types -----------*- tablegen -*-===//
//
// The spec's domains. `tensor(dtype, shape)` is the builtin ranked tensor; the
// other four are l3 types. Finiteness (L3.5: bounded sequences, positive
// sizes) is checked by the declarations that use a domain, so that the
// diagnostic points at the declaration and names its row.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_DIALECT_L3_TYPES_TD
#define SYNPL_DIALECT_L3_TYPES_TD

include "synpl/Dialect/L3/L3Dialect.td"
include "mlir/IR/BuiltinTypeInterfaces.td"
include "synpl/Interfaces/SpecInterfaces.td"

def L3_DistType : L3_Type<"Dist", "dist", [
    DeclareTypeInterfaceMethods<Synpl_ExampleDomainTypeInterface, ["isDistribution"]>]> {
  let summary = "a probability distribution over n classes: `dist(n)`";
  let description = [{
    `!l3.dist<10>` is the spec's `dist(10)`: a categorical distribution over
    10 classes. A model whose `out` is a `dist` is a classifier; a
    `divergence` between a `dist<n>` and an integer class label (a one-element
    integer tensor or an integer `scalar`) or another `dist<n>` is well-formed.
    The class count must be positive (L3.5).
  }];
  let parameters = (ins "int64_t":$numClasses);
  let assemblyFormat = "`<` $numClasses `>`";
}

def L3_ScalarType : L3_Type<"Scalar", "scalar", [
    DeclareTypeInterfaceMethods<Synpl_ExampleDomainTypeInterface>]> {
  let summary = "a single value: `scalar(dtype)`";
  let description = [{
    `!l3.scalar<f32>` is the spec's `scalar(f32)`. The dtype is a builtin
    integer, index or floating-point type.
  }];
  let parameters = (ins "::mlir::Type":$dtype);
  let assemblyFormat = "`<` $dtype `>`";
  let genVerifyDecl = 1;
}

def L3_SequenceType : L3_Type<"Sequence", "sequence", [
    DeclareTypeInterfaceMethods<Synpl_ExampleDomainTypeInterface>]> {
  let summary = "a variable-length, bounded sequence: `sequence(domain, max_len)`";
  let description = [{
    `!l3.sequence<!l3.scalar<i32>, 512>` holds up to 512 elements of its
    element domain. The spec requires every sequence to be bounded; a sequence
    written without a bound, `!l3.sequence<!l3.scalar<i32>, ?>`, parses so
    that the declaration using it can be rejected with a located L3.5
    diagnostic (`[resource] L3.5: ... is unbounded`).
  }];
  let parameters = (ins "::mlir::Type":$elementDomain, "int64_t":$maxLen);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Whether a `max_len` was written (`?` is "unbounded").
    bool isBounded() const { return getMaxLen() != ::mlir::ShapedType::kDynamic; }
  }];
}

def L3_TableType : L3_Type<"Table", "table"> {
  let summary = "a table of named, typed columns: `table(col: domain, ...)`";
  let description = [{
    `!l3.table<age: !l3.scalar<i32>, label: !l3.dist<3>>` is the spec's
    `table(age: scalar(i32), label: dist(3))`. Column names are unique and
    there is at least one column.
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::StringAttr", "column names">:$columnNames,
    ArrayRefParameter<"::mlir::Type", "column domains">:$columnDomains);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The domain of column `name`, or null when there is no such column.
    ::mlir::Type getColumnDomain(::llvm::StringRef name) const;
  }];
}

/// Any spec domain. Whether it is finite and concrete is L3.5, checked by the
/// declaration that holds it.
def L3_AnyDomain : Type<
    Or<[AnyTensor.predicate, L3_DistType.predicate, L3_ScalarType.predicate,
        L3_SequenceType.predicate, L3_TableType.predicate]>,
    "an L3 domain (tensor, !l3.sequence, !l3.table, !l3.dist, !l3.scalar)">;

#endif // SYNPL_DIALECT_L3_TYPES_TD
