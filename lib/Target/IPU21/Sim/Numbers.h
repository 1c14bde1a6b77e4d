//===- Numbers.h - Element encodings of the ipu21 simulator -------*- C++ -*-===//
//
// The simulator's private number helpers; each element type's bytes to and
// from a double (decodeElem, encodeElem) are public, in Simulator.h.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_NUMBERS_H
#define SYNPL_LIB_TARGET_IPU21_SIM_NUMBERS_H

#include "synpl/Target/IPU21/Simulator.h"

#include <cstdint>

namespace synpl::ipu21::sim {

/// `value` rounded to binary16 and back (the f16 AMP's partial sums).
float roundToHalf(float value);

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_NUMBERS_H
