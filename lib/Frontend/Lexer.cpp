//===- Lexer.cpp - Tokens of the .syn surface syntax ----------------------===//
#include "Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SourceMgr.h"

using namespace synpl::syn;

static bool isIdentStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }

llvm::StringRef Token::getNumberPart() const {
  size_t i = 0;
  while (i < spelling.size() &&
         (llvm::isDigit(spelling[i]) || spelling[i] == '.'))
    ++i;
  return spelling.take_front(i);
}

llvm::StringRef Token::getSuffix() const {
  return spelling.drop_front(getNumberPart().size());
}

std::string Token::getStringValue() const {
  std::string value;
  llvm::StringRef body = spelling.drop_front().drop_back();
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c == '\\' && i + 1 < body.size()) {
      char n = body[++i];
      value.push_back(n == 'n' ? '\n' : n == 't' ? '\t' : n);
      continue;
    }
    value.push_back(c);
  }
  return value;
}

llvm::StringRef Token::kindName(Kind k) {
  switch (k) {
  case Eof: return "end of file";
  case Error: return "invalid token";
  case Identifier: return "identifier";
  case Integer: return "integer";
  case Float: return "number";
  case Suffixed: return "number with a suffix";
  case String: return "string";
  case LBrace: return "'{'";
  case RBrace: return "'}'";
  case LParen: return "'('";
  case RParen: return "')'";
  case LSquare: return "'['";
  case RSquare: return "']'";
  case Colon: return "':'";
  case ColonColon: return "'::'";
  case Comma: return "','";
  case Dot: return "'.'";
  case Equal: return "'='";
  case Question: return "'?'";
  case Less: return "'<'";
  case LessEqual: return "'<='";
  case Greater: return "'>'";
  case GreaterEqual: return "'>='";
  case EqualEqual: return "'=='";
  case NotEqual: return "'!='";
  case HashLSquare: return "'#['";
  case Minus: return "'-'";
  case Arrow: return "'->'";
  case BiArrow: return "'<->'";
  case At: return "'@'";
  case Pipe: return "'|'";
  }
  return "token";
}

Lexer::Lexer(const llvm::SourceMgr &sourceMgr, unsigned bufferId)
    : buffer(sourceMgr.getMemoryBuffer(bufferId)->getBuffer()),
      cur(buffer.begin()) {}

Token Lexer::make(Token::Kind kind, const char *start) {
  Token tok;
  tok.kind = kind;
  tok.spelling = llvm::StringRef(start, cur - start);
  return tok;
}

Token Lexer::makeError(const char *start, const char *end,
                       std::string message) {
  cur = end;
  Token tok;
  tok.kind = Token::Error;
  tok.spelling = llvm::StringRef(start, end - start);
  tok.message = std::move(message);
  return tok;
}

void Lexer::skipWhitespaceAndComments() {
  const char *end = buffer.end();
  while (cur < end) {
    char c = *cur;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
        c == '\v') {
      ++cur;
    } else if (c == '/' && cur + 1 < end && cur[1] == '/') {
      while (cur < end && *cur != '\n')
        ++cur;
    } else {
      return;
    }
  }
}

Token Lexer::lex() {
  skipWhitespaceAndComments();
  const char *end = buffer.end();
  const char *start = cur;
  if (cur >= end)
    return make(Token::Eof, cur);

  char c = *cur++;
  if (isIdentStart(c)) {
    while (cur < end && isIdentChar(*cur))
      ++cur;
    return make(Token::Identifier, start);
  }
  if (llvm::isDigit(c))
    return lexNumber(start);
  auto next = [&](char n) {
    if (cur < end && *cur == n) {
      ++cur;
      return true;
    }
    return false;
  };
  switch (c) {
  case '{': return make(Token::LBrace, start);
  case '}': return make(Token::RBrace, start);
  case '(': return make(Token::LParen, start);
  case ')': return make(Token::RParen, start);
  case '[': return make(Token::LSquare, start);
  case ']': return make(Token::RSquare, start);
  case ',': return make(Token::Comma, start);
  case '.': return make(Token::Dot, start);
  case '?': return make(Token::Question, start);
  case ':':
    return make(next(':') ? Token::ColonColon : Token::Colon, start);
  case '=':
    return make(next('=') ? Token::EqualEqual : Token::Equal, start);
  case '<':
    if (cur + 1 < end && cur[0] == '-' && cur[1] == '>') {
      cur += 2;
      return make(Token::BiArrow, start);
    }
    return make(next('=') ? Token::LessEqual : Token::Less, start);
  case '-':
    return make(next('>') ? Token::Arrow : Token::Minus, start);
  case '@': return make(Token::At, start);
  case '|': return make(Token::Pipe, start);
  case '>':
    return make(next('=') ? Token::GreaterEqual : Token::Greater, start);
  case '!':
    if (next('='))
      return make(Token::NotEqual, start);
    return makeError(start, cur, "unexpected '!'; did you mean '!='?");
  case '#':
    if (next('['))
      return make(Token::HashLSquare, start);
    return makeError(start, cur,
                     "expected '[' after '#' (an escape hatch is "
                     "'#[<layer>::<directive>]')");
  case '"':
    return lexString(start);
  default:
    break;
  }
  // Report a whole UTF-8 sequence (or one stray byte) as one token.
  const char *stop = cur;
  if (static_cast<unsigned char>(c) >= 0xC0)
    while (stop < end && (static_cast<unsigned char>(*stop) & 0xC0) == 0x80)
      ++stop;
  std::string shown;
  if (llvm::isPrint(c))
    shown = std::string("'") + c + "'";
  else
    shown = "byte 0x" + llvm::utohexstr(static_cast<unsigned char>(c), false,
                                        2);
  return makeError(start, stop, "unexpected character " + shown);
}

/// digits [ '.' digits ] [ ('e'|'E') ['+'|'-'] digits ] [ suffix [ '/' unit ] ]
Token Lexer::lexNumber(const char *start) {
  const char *end = buffer.end();
  bool isFloat = false;
  while (cur < end && llvm::isDigit(*cur))
    ++cur;
  if (cur + 1 < end && *cur == '.' && llvm::isDigit(cur[1])) {
    isFloat = true;
    ++cur;
    while (cur < end && llvm::isDigit(*cur))
      ++cur;
  }
  if (cur < end && (*cur == 'e' || *cur == 'E')) {
    const char *exp = cur + 1;
    if (exp < end && (*exp == '+' || *exp == '-'))
      ++exp;
    if (exp < end && llvm::isDigit(*exp)) {
      isFloat = true;
      cur = exp;
      while (cur < end && llvm::isDigit(*cur))
        ++cur;
    } else if (exp > cur + 1 || exp >= end || !isIdentChar(*exp)) {
      // `1e`, `1e-`, `1e+x`: an exponent without digits.
      const char *stop = exp;
      while (stop < end && isIdentChar(*stop))
        ++stop;
      return makeError(start, stop,
                       "malformed number: exponent has no digits");
    }
  }
  if (cur < end && isIdentStart(*cur)) {
    while (cur < end && isIdentChar(*cur))
      ++cur;
    // A rate: `2GB/s` (a `/` followed by a unit word; `//` is a comment).
    if (cur + 1 < end && *cur == '/' && isIdentStart(cur[1])) {
      cur += 2;
      while (cur < end && isIdentChar(*cur))
        ++cur;
    }
    return make(Token::Suffixed, start);
  }
  if (cur < end && *cur == '.' && cur + 1 < end && llvm::isDigit(cur[1])) {
    const char *stop = cur;
    while (stop < end && (llvm::isDigit(*stop) || *stop == '.'))
      ++stop;
    return makeError(start, stop, "malformed number: more than one '.'");
  }
  return make(isFloat ? Token::Float : Token::Integer, start);
}

Token Lexer::lexString(const char *start) {
  const char *end = buffer.end();
  while (cur < end) {
    char c = *cur++;
    if (c == '"')
      return make(Token::String, start);
    if (c == '\n')
      break;
    if (c == '\\' && cur < end)
      ++cur;
  }
  return makeError(start, start + 1, "unterminated string");
}
