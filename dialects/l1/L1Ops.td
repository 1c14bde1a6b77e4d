//===- L1Ops.td - The l1 dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L1_OPS_TD
#define SYNPL_DIALECT_L1_OPS_TD

include "synpl/Dialect/L1/L1Dialect.td"

#endif // SYNPL_DIALECT_L1_OPS_TD
