//===- L2Ops.td - The l2 dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L2_OPS_TD
#define SYNPL_DIALECT_L2_OPS_TD

include "synpl/Dialect/L2/L2Dialect.td"

#endif // SYNPL_DIALECT_L2_OPS_TD
