//===- Numbers.h - Element encodings of the ipu21 simulator -------*- C++ -*-===//
//
// Each element type's bytes (little-endian) to and from a double. Encoding
// rounds as roundToElem (Simulator.h) documents.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_TARGET_IPU21_SIM_NUMBERS_H
#define SYNPL_LIB_TARGET_IPU21_SIM_NUMBERS_H

#include "synpl/Target/IPU21/Program.h"

#include <cstdint>

namespace synpl::ipu21::sim {

/// The element of type `t` at `p` as a double (exact for every type).
double decodeElem(ElemType t, const uint8_t *p);
/// `value` rounded to `t`, written at `p` (elemBytes(t) bytes).
void encodeElem(ElemType t, double value, uint8_t *p);
/// `value` rounded to binary16 and back (the f16 AMP's partial sums).
float roundToHalf(float value);

} // namespace synpl::ipu21::sim

#endif // SYNPL_LIB_TARGET_IPU21_SIM_NUMBERS_H
