//===- Lowering.h - Shared helpers of the L0 -> LLVM lowerings ---*- C++ -*-===//
//
// Both lowerings convert everything or fail with one diagnostic
//   lowered N of M ops; not lowered: <op> at <loc>: <why>
// at the first op they could not lower, leaving the module untouched
// (synpl/Support/NotLowered.h builds it).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_CONVERSION_L0TOLLVM_LOWERING_H
#define SYNPL_LIB_CONVERSION_L0TOLLVM_LOWERING_H

#include "synpl/Support/NotLowered.h"

namespace synpl::l0tollvm {

using synpl::formatLoc;
using synpl::NotLowered;
using synpl::reportNotLowered;

} // namespace synpl::l0tollvm

#endif // SYNPL_LIB_CONVERSION_L0TOLLVM_LOWERING_H
