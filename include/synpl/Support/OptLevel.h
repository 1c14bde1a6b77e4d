//===- OptLevel.h - A function's own optimization level ---------*- C++ -*-===//
//
// The contract between the LLVM lowering of the L0 kernels and the host
// backend: a function that asks for its own optimization effort carries the
// LLVM string attribute kOptLevelAttr = "0" to "3" (the lowering sets it
// from an `l0uop.kernel`'s `opt_level`; synpl::host::splitByOptLevel and
// optimizeForHost honour it).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_SUPPORT_OPTLEVEL_H
#define SYNPL_SUPPORT_OPTLEVEL_H

namespace synpl {

inline constexpr const char *kOptLevelAttr = "synpl-opt-level";

} // namespace synpl

#endif // SYNPL_SUPPORT_OPTLEVEL_H
