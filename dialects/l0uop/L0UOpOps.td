//===- L0UOpOps.td - The l0uop dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0UOP_OPS_TD
#define SYNPL_DIALECT_L0UOP_OPS_TD

include "synpl/Dialect/L0UOp/L0UOpDialect.td"

#endif // SYNPL_DIALECT_L0UOP_OPS_TD
