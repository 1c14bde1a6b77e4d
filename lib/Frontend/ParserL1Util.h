//===- ParserL1Util.h - Helpers the L1 form parsers share ------*- C++ -*-===//
//
// Private to lib/Frontend: what the files of the .syn L1 forms
// (ParserL1.cpp, ParserL1Tensor.cpp, ParserL1Actors.cpp, ParserL1Stages.cpp)
// share beyond the Parser class: word lists for messages, the module being
// built, a depth guard against hostile nesting, and binding a call's
// arguments.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_FRONTEND_PARSERL1UTIL_H
#define SYNPL_LIB_FRONTEND_PARSERL1UTIL_H

#include "Parser.h"

namespace synpl::syn::detail {

/// `a, b or c`.
std::string orList(llvm::ArrayRef<llvm::StringRef> words);

/// The value of a number argument (its sign applied).
double numberValue(const Parser::L1Arg &arg);

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

#endif // SYNPL_LIB_FRONTEND_PARSERL1UTIL_H
