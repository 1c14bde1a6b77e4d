//===- DeepInput.cpp - Inputs that nest too deeply for a recursive parser -===//
#include "synpl/Support/DeepInput.h"

#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/thread.h"

namespace synpl {

std::optional<size_t> findDeepNesting(llvm::StringRef text, unsigned limit) {
  unsigned depth = 0;
  for (size_t i = 0, n = text.size(); i < n; ++i) {
    char c = text[i];
    switch (c) {
    case '"': // a string literal: to its closing quote
      for (++i; i < n && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      break;
    case '/':
      if (i + 1 < n && text[i + 1] == '/')
        while (i < n && text[i] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
    case '<':
      if (++depth > limit)
        return i;
      break;
    case '>':
      if (i > 0 && text[i - 1] == '-')
        break;
      [[fallthrough]];
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return std::nullopt;
}

std::string deepNestingMessage(unsigned limit) {
  return "the input nests brackets more than " + std::to_string(limit) +
         " levels deep here; the parser recurses once per level, and synplexum's tools "
         "refuse deeper input rather than exhaust the stack";
}

bool checkNesting(llvm::StringRef text, llvm::StringRef name, unsigned limit) {
  std::optional<size_t> at = findDeepNesting(text, limit);
  if (!at)
    return true;
  // The position alone: the line itself may be megabytes long.
  unsigned line = 1, column = 1;
  for (size_t i = 0; i < *at; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  llvm::errs() << name << ":" << line << ":" << column
               << ": error: " << deepNestingMessage(limit) << "\n";
  return false;
}

int runWithLargeStack(llvm::function_ref<int()> fn) {
  int result = 1;
  llvm::thread worker(std::optional<unsigned>(kLargeStackBytes), [&] { result = fn(); });
  worker.join();
  return result;
}

} // namespace synpl

// In a build with AddressSanitizer (scripts/sanitize.sh), the defaults of
// every tool (they all run through runWithLargeStack, so this file is in
// each of them): LLVM's and MLIR's libraries are not instrumented, but the
// allocators in their headers poison and unpoison memory when inlined into
// instrumented code, and memory one side poisons the other hands out --
// "use-after-poison" reports that are no bug. Manual poisoning is ignored;
// every other check stays on. Leaks are not errors: MLIR's uniquers live
// until exit.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0:detect_leaks=0";
}
#endif
#endif
