//===- Codelets.h - What each ipu21 codelet computes ---------------*- C++ -*-===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_CODELETS_H
#define SYNPL_LIB_TARGET_IPU21_SIM_CODELETS_H

#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/Program.h"

#include <cstdint>
#include <vector>

namespace synpl::ipu21::sim {

/// Runs one vertex of codelet `c` (with its checked `params`) on the values
/// of its fields, in field order, each the exact value of its stored
/// element. The last field is the output: it is updated in place, already
/// rounded the way the hardware rounds partial results (the caller rounds it
/// to the output type once more when storing, which changes nothing for the
/// float outputs).
void runCodelet(const Codelet &c, const std::vector<int64_t> &params,
                std::vector<std::vector<double>> &fields, const Facts &facts);

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_CODELETS_H
