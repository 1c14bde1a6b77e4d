//===- ParserVerify.cpp - Verifying a parsed .syn module ------------------===//
//
// Verification after parsing, with the diagnostics moved where the user
// wrote the thing at fault: a dangling reference onto the reference as
// written, an l2 diagnostic about a whole `methods for` block onto the
// method it is about.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "ParserUtil.h"

#include "synpl/Dialect/L2/L2Dialect.h"
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::syn;
using namespace synpl::syn::detail;

//===----------------------------------------------------------------------===//
// Verification with diagnostics moved onto references
//===----------------------------------------------------------------------===//

/// Whether `message` names `ref` as printed (`@mnist::@labelz`) followed by a
/// word boundary.
static bool mentions(StringRef message, SymbolRefAttr ref) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << ref;
  for (size_t pos = message.find(text); pos != StringRef::npos;
       pos = message.find(text, pos + 1)) {
    size_t after = pos + text.size();
    if (after == message.size() ||
        !(llvm::isAlnum(message[after]) || message[after] == '_' ||
          message[after] == ':' || message[after] == '@'))
      return true;
  }
  return false;
}

std::optional<Location> Parser::propertyLocFor(Location opLoc,
                                               StringRef message) {
  auto it = propertyUses.find(opLoc);
  size_t row = message.find("L3.4: ");
  if (it == propertyUses.end() || row == StringRef::npos)
    return std::nullopt;
  StringRef rest = message.drop_front(row + 6);
  StringRef kind;
  unsigned occurrence = 0;
  if (rest.consume_front("constraint '")) {
    // "constraint 'depth' is given twice": the second one is the culprit.
    kind = rest.take_until([](char c) { return c == '\''; });
    occurrence = 1;
  } else if (rest.consume_front("conflicting constraints ")) {
    // "conflicting constraints #l3.depth<2> and #l3.depth<3>".
    size_t last = rest.rfind("#l3.");
    if (last == StringRef::npos)
      return std::nullopt;
    kind = rest.drop_front(last + 4).take_while(
        [](char c) { return llvm::isAlnum(c) || c == '_'; });
    occurrence = 1;
  } else {
    // "causal constrains ...", "latency_budget(0ms) admits no model".
    kind = rest.take_while([](char c) { return llvm::isAlnum(c) || c == '_'; });
  }
  for (const auto &[name, loc] : it->second)
    if (name == kind && occurrence-- == 0)
      return loc;
  return std::nullopt;
}

std::optional<Location> Parser::methodsLocFor(Location opLoc,
                                              StringRef message) {
  auto it = methodsUses.find(opLoc);
  if (it == methodsUses.end())
    return std::nullopt;
  const MethodsUse &use = it->second;
  if (message.contains("L2.5: "))
    return use.sample;
  if (message.contains("L2.4: ")) {
    // "the update of "fc1.weight" produces ...", "overrides parameter "x"".
    for (const auto &[param, loc] : use.overrides)
      if (message.contains("update of \"" + param + "\"") ||
          message.contains("overrides parameter \"" + param + "\""))
        return loc;
    return use.update;
  }
  if (!message.contains("L2.3: "))
    return std::nullopt;
  // "autodiff checkpoint names layer "fc9", which is not ...".
  for (const auto &[name, loc] : use.checkpoints)
    if (message.contains("checkpoint names layer \"" + name + "\""))
      return loc;
  return use.backward;
}

LogicalResult Parser::verify(ModuleOp module) {
  bool forwarding = false;
  // The l3 verifiers locate a reference error at the op that reads the ref;
  // the .syn text has a better place: the reference itself.
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) -> LogicalResult {
    if (forwarding || diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    std::string message = diag.str();
    // The l1 verifiers name values as printed (`%arg1`); the .syn text
    // named them (`y`).
    std::string renamed = renameValues(module, diag.getLocation(), message);
    bool changed = renamed != message;
    message = std::move(renamed);
    std::optional<Location> target =
        propertyLocFor(diag.getLocation(), message);
    if (!target)
      target = methodsLocFor(diag.getLocation(), message);
    // "escape hatch #l3.hint<l3::force, "x"> targets layer 'l3'".
    for (const HatchUse &hatch : hatchUses) {
      if (target || hatch.owner != diag.getLocation())
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << hatch.hint;
      if (StringRef(message).contains(text))
        target = hatch.loc;
      // The l2 verifiers name a hatch as written: `#[l2::backward(...)]`.
      if (auto h = dyn_cast<l3::HintAttr>(hatch.hint))
        if (!target && StringRef(message).contains(h.spelled()))
          target = hatch.loc;
    }
    if (auto it = refUses.find(diag.getLocation());
        !target && it != refUses.end())
      for (const RefUse &candidate : it->second)
        if (mentions(message, candidate.ref)) {
          target = candidate.loc;
          break;
        }
    if ((!target || *target == diag.getLocation()) && !changed)
      return failure();
    forwarding = true;
    {
      InFlightDiagnostic moved =
          emitError(target.value_or(diag.getLocation())) << message;
      for (Diagnostic &note : diag.getNotes())
        moved.attachNote(note.getLocation())
            << renameValues(module, diag.getLocation(), note.str());
    }
    forwarding = false;
    return success();
  });
  // The op's generic form ("see current operation") says nothing a .syn
  // author wrote; the diagnostic already points at the source.
  bool printOp = ctx->shouldPrintOpOnDiagnostic();
  ctx->printOpOnDiagnostic(false);
  LogicalResult result = mlir::verify(module);
  ctx->printOpOnDiagnostic(printOp);
  return result;
}
