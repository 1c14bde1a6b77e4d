//===- L3Ops.td - The l3 dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L3_OPS_TD
#define SYNPL_DIALECT_L3_OPS_TD

include "synpl/Dialect/L3/L3Dialect.td"

#endif // SYNPL_DIALECT_L3_OPS_TD
