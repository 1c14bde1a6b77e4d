//===- Globals.h - What LLVM constants refer to (host backend internal) ---===//
#ifndef SYNPL_TARGET_HOST_GLOBALS_H
#define SYNPL_TARGET_HOST_GLOBALS_H

#include "llvm/ADT/SmallPtrSet.h"

namespace llvm {
class Constant;
class GlobalValue;
} // namespace llvm

namespace synpl::host {

/// Every global value `c` refers to, through constant expressions and
/// aggregates, into `out`; `seen` holds the constants already walked.
void collectGlobals(const llvm::Constant *c, llvm::SmallPtrSetImpl<const llvm::GlobalValue *> &out,
                    llvm::SmallPtrSetImpl<const llvm::Constant *> &seen);

} // namespace synpl::host

#endif // SYNPL_TARGET_HOST_GLOBALS_H
