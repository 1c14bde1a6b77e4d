//===- ToPtx.h - synpl-translate --synpl-to-ptx ------------------*- C++ -*-===//
#ifndef SYNPL_TOOLS_SYNPL_TRANSLATE_TOPTX_H
#define SYNPL_TOOLS_SYNPL_TRANSLATE_TOPTX_H

namespace synpl {
/// Registers --synpl-to-ptx (and its options --synpl-ptx-chip,
/// --synpl-ptx-tune-launch).
void registerToPtxTranslation();
} // namespace synpl

#endif // SYNPL_TOOLS_SYNPL_TRANSLATE_TOPTX_H
