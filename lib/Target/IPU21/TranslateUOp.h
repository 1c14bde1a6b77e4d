//===- TranslateUOp.h - A generic codelet's body as UOp instructions -*- C++ -*-===//
//
// Private to lib/Target/IPU21: the program file's form of a `uop` codelet
// (sim::UInst, one per UOp of its body), used by Translate.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_TARGET_IPU21_TRANSLATEUOP_H
#define SYNPL_LIB_TARGET_IPU21_TRANSLATEUOP_H

#include "synpl/Dialect/IPU21/IPU21Ops.h"
#include "synpl/Target/IPU21/Program.h"

namespace synpl::ipu21 {

/// Fills `out`'s uopFields and uop from `codelet` (kind uop, verified).
/// Fails, with an error at the op, on a UOp the program file has no form
/// for.
mlir::LogicalResult translateUOpCodelet(CodeletOp codelet, sim::Codelet &out);

/// The program file's element type of an ipu21 object's (or a uop field's
/// buffer's) element type: an i1 buffer is stored as bytes.
sim::ElemType elemTypeOf(mlir::Type type);

} // namespace synpl::ipu21

#endif // SYNPL_LIB_TARGET_IPU21_TRANSLATEUOP_H
