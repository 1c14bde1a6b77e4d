//===- Lexer.h - Tokens of the .syn surface syntax ----------------*- C++ -*-===//
//
// A hand-written lexer over one SourceMgr buffer. Tokens keep their spelling
// (a StringRef into the buffer), so every location is exact and raw text
// (escape-hatch arguments) can be recovered between two tokens.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_FRONTEND_LEXER_H
#define SYNPL_LIB_FRONTEND_LEXER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace synpl::syn {

struct Token {
  enum Kind {
    Eof,
    Error,      ///< a malformed token; `message` says why
    Identifier, ///< [A-Za-z_][A-Za-z0-9_]*
    Integer,    ///< 784
    Float,      ///< 1.0, 1e-4, 0.5e3
    Suffixed,   ///< a number with a unit or suffix: 500K, 5ms, 1.5M, 2GB/s
    String,     ///< "..." (spelling includes the quotes)
    LBrace, RBrace, LParen, RParen, LSquare, RSquare,
    Colon, ColonColon, Comma, Dot, Equal, Question,
    Less, LessEqual, Greater, GreaterEqual, EqualEqual, NotEqual,
    HashLSquare, ///< `#[`, the start of an escape hatch
    Minus,       ///< `-` (a negative number)
    Arrow,       ///< `->`
    BiArrow,     ///< `<->`
    At,          ///< `@` (a storage binding: `images : ... @ ssd_0`)
    Pipe,        ///< `|` (alternatives in a stage's result annotation)
  };

  Kind kind = Eof;
  llvm::StringRef spelling;
  /// For Error tokens: what is wrong.
  std::string message;

  bool is(Kind k) const { return kind == k; }
  bool isKeyword(llvm::StringRef word) const {
    return kind == Identifier && spelling == word;
  }
  llvm::SMLoc getLoc() const {
    return llvm::SMLoc::getFromPointer(spelling.data());
  }
  /// For Suffixed tokens: the numeric part and the suffix.
  llvm::StringRef getNumberPart() const;
  llvm::StringRef getSuffix() const;
  /// For String tokens: the contents without quotes, escapes undone.
  std::string getStringValue() const;

  static llvm::StringRef kindName(Kind k);
};

class Lexer {
public:
  Lexer(const llvm::SourceMgr &sourceMgr, unsigned bufferId);

  Token lex();
  /// The buffer being lexed.
  llvm::StringRef getBuffer() const { return buffer; }

private:
  Token make(Token::Kind kind, const char *start);
  Token makeError(const char *start, const char *end, std::string message);
  Token lexNumber(const char *start);
  Token lexString(const char *start);
  void skipWhitespaceAndComments();

  llvm::StringRef buffer;
  const char *cur;
};

} // namespace synpl::syn

#endif // SYNPL_LIB_FRONTEND_LEXER_H
