//===- L0CtlOps.td - The l0ctl dialect's operations -------------*- tablegen -*-===//
#ifndef SYNPL_DIALECT_L0CTL_OPS_TD
#define SYNPL_DIALECT_L0CTL_OPS_TD

include "synpl/Dialect/L0Ctl/L0CtlDialect.td"

#endif // SYNPL_DIALECT_L0CTL_OPS_TD
