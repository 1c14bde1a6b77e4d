//===- IPU21Dialect.cpp - The ipu21 dialect ---------------------------------===//
#include "synpl/Dialect/IPU21/IPU21Ops.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace synpl::ipu21;

#include "synpl/Dialect/IPU21/IPU21Dialect.cpp.inc"
#include "synpl/Dialect/IPU21/IPU21Enums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "synpl/Dialect/IPU21/IPU21Attrs.cpp.inc"

void IPU21Dialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "synpl/Dialect/IPU21/IPU21Ops.cpp.inc"
      >();
}

void IPU21Dialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "synpl/Dialect/IPU21/IPU21Attrs.cpp.inc"
      >();
}

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef arch, int64_t tiles, int64_t bytesPerTile,
                                 int64_t elementBytes, int64_t workers, int64_t clockHz,
                                 int64_t sramBase, int64_t execEnd, int64_t interleavedBegin,
                                 int64_t sramEnd, int64_t rptCountMax) {
  if (arch != "ipu21" && arch != "ipu2")
    return emitError() << "arch is \"" << arch << "\"; expected \"ipu21\" or \"ipu2\"";
  if (tiles <= 0 || bytesPerTile <= 0 || workers <= 0 || clockHz <= 0 || rptCountMax <= 0)
    return emitError() << "tiles, bytes_per_tile, workers, clock_hz and rpt_count_max must "
                          "be positive";
  // A tile's hardware threads: six on every IPU; the program file admits
  // at most 64 (a generic vertex runs one part per worker).
  if (workers > 64)
    return emitError() << "workers " << workers << " is more than a tile has (at most 64)";
  if (elementBytes <= 0 || (elementBytes & (elementBytes - 1)))
    return emitError() << "element_bytes " << elementBytes << " is not a power of two";
  if (sramBase < 0 || sramEnd - sramBase != bytesPerTile)
    return emitError() << "the SRAM span [" << sramBase << ", " << sramEnd << ") is not "
                       << bytesPerTile << " bytes (bytes_per_tile)";
  if (execEnd <= sramBase || execEnd > sramEnd)
    return emitError() << "exec_end " << execEnd << " lies outside the SRAM span";
  if (interleavedBegin < sramBase || interleavedBegin > sramEnd ||
      interleavedBegin % (2 * elementBytes))
    return emitError() << "interleaved_begin " << interleavedBegin
                       << " is not an element-pair boundary inside the SRAM span";
  return success();
}
