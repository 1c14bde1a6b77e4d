//===- DeepInput.h - Inputs that nest too deeply for a recursive parser ---===//
//
// MLIR's parser, printer and verifiers recurse once per nesting level of a
// type, attribute or region, and so does the .syn parser: an input with tens
// of thousands of `tensor<` or `[` exhausts an 8 MiB main-thread stack and
// the tool dies. The tools therefore (1) refuse an input that nests brackets
// deeper than kMaxInputNesting, with a located error, before parsing it, and
// (2) run on a thread with a large stack, so that everything below the bound
// -- and what a program builds from it -- has room.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_SUPPORT_DEEPINPUT_H
#define SYNPL_SUPPORT_DEEPINPUT_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>

namespace synpl {

/// The deepest bracket nesting the tools read. Real programs nest a few
/// dozen levels; a verified program at this depth still leaves the large
/// stack (runWithLargeStack) mostly unused.
inline constexpr unsigned kMaxInputNesting = 2000;

/// The stack runWithLargeStack gives its function.
inline constexpr unsigned kLargeStackBytes = 1u << 30;

/// The byte offset in `text` where its brackets -- ( [ { < -- first nest
/// deeper than `limit`; nullopt when they never do. String literals
/// ("...", with backslash escapes) and // comments are skipped, and the
/// `>` of `->` closes nothing. An unbalanced closer is ignored: this is a
/// bound on what a parser would recurse into, not a check of balance.
std::optional<size_t> findDeepNesting(llvm::StringRef text, unsigned limit = kMaxInputNesting);

/// The error for input that nests deeper than `limit`.
std::string deepNestingMessage(unsigned limit = kMaxInputNesting);

/// Checks the buffer `text` named `name`: false after printing
/// "name:line:col: error: <deepNestingMessage>" to stderr when it nests too
/// deeply.
bool checkNesting(llvm::StringRef text, llvm::StringRef name,
                  unsigned limit = kMaxInputNesting);

/// Runs `fn` on a thread with a kLargeStackBytes stack and returns what it
/// returns (the tools' mains run this way).
int runWithLargeStack(llvm::function_ref<int()> fn);

} // namespace synpl

#endif // SYNPL_SUPPORT_DEEPINPUT_H
