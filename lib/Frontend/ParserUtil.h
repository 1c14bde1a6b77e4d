//===- ParserUtil.h - Helpers the .syn form parsers share -------*- C++ -*-===//
//
// Private to lib/Frontend: what the files of the parser share beyond the
// Parser class: word lists and value descriptions for messages, the
// unwrap-or-return macro of the builders, the module being built, a depth
// guard against hostile nesting, and binding an L1 call's arguments.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_FRONTEND_PARSERUTIL_H
#define SYNPL_LIB_FRONTEND_PARSERUTIL_H

#include "Parser.h"

/// `auto var = *expr;` when `expr` (a FailureOr) succeeded, else return
/// failure from the enclosing builder.
#define SYN_TRY(var, expr)                                                     \
  auto var##OrFailure = (expr);                                                \
  if (failed(var##OrFailure))                                                  \
    return failure();                                                          \
  auto var = *var##OrFailure;

namespace synpl::syn::detail {

/// `a, b or c` (or `a, b and c`).
std::string listWords(llvm::ArrayRef<llvm::StringRef> words,
                      llvm::StringRef conjunction = "or");

/// A value as a message names it: `'relu'`, `'linear(...)'`, a list.
std::string describeValue(const SynValue &v);

/// The value of a number argument (its sign applied).
double numberValue(const Parser::L1Arg &arg);

/// The names of an enum's cases, in order (L2_ENUM_WORDS(ActFn): the l2
/// enum's).
template <typename EnumT>
llvm::SmallVector<llvm::StringRef> enumWords(uint64_t maxValue,
                                             llvm::StringRef (*stringify)(EnumT)) {
  llvm::SmallVector<llvm::StringRef> words;
  for (uint64_t i = 0; i <= maxValue; ++i)
    words.push_back(stringify(static_cast<EnumT>(i)));
  return words;
}
#define L2_ENUM_WORDS(Name)                                                    \
  ::synpl::syn::detail::enumWords<l2::Name>(l2::getMaxEnumValFor##Name(),      \
                                            &l2::stringify##Name)

/// The module the builder inserts into.
mlir::ModuleOp moduleOf(mlir::OpBuilder &builder);

/// Counts nesting (of calls, of `if`s) so that hostile input cannot exhaust
/// the stack.
struct NestingGuard {
  unsigned &depth;
  explicit NestingGuard(unsigned &d) : depth(d) { ++depth; }
  ~NestingGuard() { --depth; }
};

/// Binds a call's arguments to parameter names (positional in order, or by
/// key) into `slots`; reports unknown, duplicate and surplus arguments and
/// missing required ones.
mlir::LogicalResult bindL1Args(llvm::StringRef callee, mlir::Location at,
                               llvm::SmallVectorImpl<Parser::L1Arg> &args,
                               llvm::ArrayRef<llvm::StringRef> params, size_t required,
                               llvm::SmallVectorImpl<Parser::L1Arg *> &slots);

/// An integer list argument (`[128, 256]`), positive when asked.
mlir::FailureOr<llvm::SmallVector<int64_t>> intList(Parser::L1Arg *arg, llvm::StringRef what,
                                                    bool positive);

/// An integer argument (`what` names it in the error).
mlir::FailureOr<int64_t> intArgOf(Parser::L1Arg *arg, llvm::StringRef what);

} // namespace synpl::syn::detail

#endif // SYNPL_LIB_FRONTEND_PARSERUTIL_H
