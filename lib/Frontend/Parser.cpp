//===- Parser.cpp - Recursive-descent parser of the .syn L3 forms ----------===//
//
// Builds l3 ops straight from the tokens; every op is located at the token
// that names it (FileLineColLoc), and the refs each op reads are remembered
// so that a dangling-reference diagnostic from the l3 verifiers can be moved
// onto the reference as written (`mnist.labelz`), not the whole term.
//
// Grammar: docs/syn.md.
//
//===----------------------------------------------------------------------===//
#include "Lexer.h"
#include "synpl/Frontend/Syn.h"

#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Support/Units.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/SourceMgr.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace synpl;
using namespace synpl::syn;

namespace {

/// A reference as written and where: `mnist.images` at 10:10.
struct RefUse {
  SymbolRefAttr ref;
  Location loc;
};

class Parser {
public:
  Parser(llvm::SourceMgr &sourceMgr, MLIRContext *ctx)
      : sourceMgr(sourceMgr), ctx(ctx), builder(ctx),
        lexer(sourceMgr, sourceMgr.getMainFileID()) {
    bufferName = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                     ->getBufferIdentifier();
    tok = lexer.lex();
  }

  OwningOpRef<ModuleOp> parseModule();
  /// Verifies `module`, moving reference diagnostics onto the ref's text.
  LogicalResult verify(ModuleOp module);

private:
  //===--- Tokens and diagnostics ---------------------------------------===//
  Location locOf(llvm::SMLoc loc) {
    auto [line, col] = sourceMgr.getLineAndColumn(loc);
    return FileLineColLoc::get(ctx, bufferName, line, col);
  }
  Location loc() { return locOf(tok.getLoc()); }
  void consume() { tok = lexer.lex(); }
  /// The token after the current one.
  Token peek() {
    Lexer copy = lexer;
    return copy.lex();
  }

  /// Inside the body of `kind name`, a top-level form means the body was
  /// never closed (`model m { in: d.x  goal: ...`). `goal` cannot start a
  /// model or loss entry; `data`/`model`/`loss` followed by a name cannot
  /// start any entry. Reports the unclosed body, noting where it opened.
  bool startsTopLevelForm(bool goalIsEntry) {
    if (!tok.is(Token::Identifier))
      return false;
    if (tok.spelling == "goal")
      return !goalIsEntry || peek().is(Token::Colon) == false;
    if (!llvm::is_contained({"data", "model", "loss"}, tok.spelling))
      return false;
    return peek().is(Token::Identifier);
  }
  ParseResult unclosedBody(StringRef kind, StringRef name, Location open) {
    InFlightDiagnostic diag = expected("'}' to close " + kind +
                                       " declaration '" + name + "'");
    diag.attachNote(open) << "the body opens here";
    return diag;
  }

  /// An error at the current token. A lexer error wins: it says what is
  /// wrong with the token better than what was expected.
  InFlightDiagnostic error(const llvm::Twine &message) {
    if (tok.is(Token::Error))
      return emitError(loc(), tok.message);
    return emitError(loc(), message);
  }
  /// `expected <what>, found <token>`.
  InFlightDiagnostic expected(const llvm::Twine &what) {
    InFlightDiagnostic diag = error("expected " + what);
    if (!tok.is(Token::Error))
      diag << ", found " << describe(tok);
    return diag;
  }
  static std::string describe(const Token &t) {
    if (t.is(Token::Eof))
      return "end of file";
    if (t.is(Token::Identifier))
      return ("'" + t.spelling + "'").str();
    if (t.is(Token::String) || t.is(Token::Integer) || t.is(Token::Float) ||
        t.is(Token::Suffixed))
      return (Token::kindName(t.kind) + " " + t.spelling).str();
    return Token::kindName(t.kind).str();
  }

  ParseResult expect(Token::Kind kind, const llvm::Twine &context) {
    if (!tok.is(kind))
      return expected(Token::kindName(kind) + " " + context);
    consume();
    return success();
  }
  bool consumeIf(Token::Kind kind) {
    if (!tok.is(kind))
      return false;
    consume();
    return true;
  }
  ParseResult parseIdent(StringRef &name, const llvm::Twine &what) {
    if (!tok.is(Token::Identifier))
      return expected(what);
    name = tok.spelling;
    consume();
    return success();
  }

  //===--- Forms ---------------------------------------------------------===//
  ParseResult parseTopLevel();
  ParseResult parseData(ArrayAttr hints);
  ParseResult parseModel(ArrayAttr hints);
  ParseResult parseLoss(ArrayAttr hints);
  ParseResult parseGoal();
  ParseResult parseHatch(SmallVectorImpl<Attribute> &hints);
  ParseResult parseHatches(SmallVectorImpl<Attribute> &hints);

  ParseResult parseDomain(Type &domain);
  ParseResult parseDtype(Type &dtype);
  ParseResult parsePositiveInt(int64_t &value, const llvm::Twine &what);
  ParseResult parseReal(double &value, const llvm::Twine &what);
  ParseResult parseRef(SymbolRefAttr &ref, Location &refLoc);
  ParseResult parseProperty(SmallVectorImpl<Attribute> &constraints);
  ParseResult parseTerm(StringRef name, Location nameLoc);
  ParseResult parseTermWeight(double &weight);

  void noteRef(Location opLoc, SymbolRefAttr ref, Location refLoc) {
    refUses[opLoc].push_back({ref, refLoc});
  }
  /// Where an L3.4 diagnostic about a model's properties belongs, if the
  /// message names one of them.
  std::optional<Location> propertyLocFor(Location opLoc, StringRef message);

  llvm::SourceMgr &sourceMgr;
  MLIRContext *ctx;
  OpBuilder builder;
  Lexer lexer;
  Token tok;
  StringRef bufferName;
  /// The refs each op reads, keyed by the op's (unique) location.
  llvm::DenseMap<Location, SmallVector<RefUse, 3>> refUses;
  /// Every escape hatch: the attribute, where it is written, and the
  /// location of the declaration it is attached to (set once that is known).
  struct HatchUse {
    Attribute hint;
    Location loc, owner;
  };
  SmallVector<HatchUse> hatchUses;
  /// The first hatch of the declaration being parsed.
  size_t declHatchStart = 0;
  void assignHatches(Location owner) {
    for (size_t i = declHatchStart; i < hatchUses.size(); ++i)
      hatchUses[i].owner = owner;
  }
  /// Each model's properties in source order: kind name and location.
  llvm::DenseMap<Location, SmallVector<std::pair<StringRef, Location>, 4>>
      propertyUses;
  /// The model whose properties are being parsed.
  Location currentModel = UnknownLoc::get(ctx);
  /// How deeply the domain being parsed is nested.
  unsigned domainDepth = 0;
  static constexpr unsigned kMaxDomainDepth = 64;
};

} // namespace

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Parser::parseModule() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(locOf(tok.getLoc()));
  builder.setInsertionPointToEnd(module->getBody());
  while (!tok.is(Token::Eof))
    if (failed(parseTopLevel()))
      return nullptr;
  return module;
}

/// program ::= { hatch* (data | model | loss) | goal }
ParseResult Parser::parseTopLevel() {
  SmallVector<Attribute> hints;
  Location firstHatch = loc();
  declHatchStart = hatchUses.size();
  if (failed(parseHatches(hints)))
    return failure();
  ArrayAttr hintAttr = hints.empty() ? ArrayAttr() : builder.getArrayAttr(hints);
  if (tok.isKeyword("data"))
    return parseData(hintAttr);
  if (tok.isKeyword("model"))
    return parseModel(hintAttr);
  if (tok.isKeyword("loss"))
    return parseLoss(hintAttr);
  if (tok.isKeyword("goal")) {
    if (!hints.empty())
      return emitError(firstHatch,
                       "an escape hatch cannot be attached to the goal; "
                       "attach it to a data, model or loss declaration");
    return parseGoal();
  }
  if (tok.is(Token::Identifier))
    return error("unknown keyword '" + tok.spelling +
                 "'; expected data, model, loss or goal");
  if (!hints.empty() && tok.is(Token::Eof))
    return expected("a data, model or loss declaration after the escape "
                    "hatch");
  return expected("a declaration (data, model, loss or goal)");
}

//===----------------------------------------------------------------------===//
// Escape hatches
//===----------------------------------------------------------------------===//

ParseResult Parser::parseHatches(SmallVectorImpl<Attribute> &hints) {
  while (tok.is(Token::HashLSquare))
    if (failed(parseHatch(hints)))
      return failure();
  return success();
}

/// hatch ::= '#[' ident '::' ident [ '(' balanced-text ')' ] ']'
ParseResult Parser::parseHatch(SmallVectorImpl<Attribute> &hints) {
  Location hatchLoc = loc();
  consume(); // '#['
  StringRef layer, directive;
  if (parseIdent(layer, "a target layer (l2, l1 or l0) in the escape hatch") ||
      expect(Token::ColonColon, "after the escape hatch's layer") ||
      parseIdent(directive, "a directive after '::'"))
    return failure();
  std::string args;
  if (tok.is(Token::LParen)) {
    Token open = tok;
    consume();
    const char *argsBegin = open.spelling.end();
    unsigned depth = 1;
    SmallVector<Token, 4> opens{open};
    while (true) {
      if (tok.is(Token::Eof)) {
        InFlightDiagnostic diag =
            error("unterminated escape hatch arguments: expected ')'");
        diag.attachNote(locOf(opens.back().getLoc())) << "'(' opened here";
        return diag;
      }
      if (tok.is(Token::Error))
        return error("");
      if (tok.is(Token::LParen) || tok.is(Token::LSquare)) {
        opens.push_back(tok);
        ++depth;
      } else if (tok.is(Token::RParen) || tok.is(Token::RSquare)) {
        Token::Kind want =
            opens.back().is(Token::LParen) ? Token::RParen : Token::RSquare;
        if (!tok.is(want))
          return expected(Token::kindName(want) +
                          " to close the bracket in the escape hatch");
        opens.pop_back();
        if (--depth == 0)
          break;
      }
      consume();
    }
    args = StringRef(argsBegin, tok.spelling.begin() - argsBegin).trim().str();
    consume(); // ')'
  }
  if (expect(Token::RSquare, "to close the escape hatch"))
    return failure();
  hints.push_back(l3::HintAttr::get(ctx, layer, directive, args));
  hatchUses.push_back({hints.back(), hatchLoc, hatchLoc});
  return success();
}

//===----------------------------------------------------------------------===//
// data
//===----------------------------------------------------------------------===//

/// data ::= 'data' ident '{' { hatch | ident ':' domain } '}'
ParseResult Parser::parseData(ArrayAttr hints) {
  consume(); // 'data'
  Location nameLoc = loc();
  StringRef name;
  if (parseIdent(name, "a name after 'data'"))
    return failure();
  Location open = loc();
  if (expect(Token::LBrace, "to open the data declaration's body"))
    return failure();
  auto data = l3::DataOp::create(builder, nameLoc, builder.getStringAttr(name),
                                 hints);
  Block &body = data.getBody().emplaceBlock();
  SmallVector<Attribute> allHints(hints ? hints.getValue()
                                        : ArrayRef<Attribute>());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body);
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(/*goalIsEntry=*/true))
      return unclosedBody("data", name, open);
    if (tok.is(Token::HashLSquare)) {
      if (parseHatch(allHints))
        return failure();
      continue;
    }
    Location fieldLoc = loc();
    StringRef field;
    if (parseIdent(field, "a field name or '}'"))
      return failure();
    if (expect(Token::Colon, "after field name"))
      return failure();
    Type domain;
    if (parseDomain(domain))
      return failure();
    l3::FieldOp::create(builder, fieldLoc, builder.getStringAttr(field),
                        TypeAttr::get(domain));
  }
  consume(); // '}'
  assignHatches(nameLoc);
  if (!allHints.empty())
    data.setHintsAttr(builder.getArrayAttr(allHints));
  return success();
}

//===----------------------------------------------------------------------===//
// Domains
//===----------------------------------------------------------------------===//

/// dtype ::= 'f16' | 'bf16' | 'f32' | 'f64' | 'i'N | 'u'N | 'bool' | 'index'
ParseResult Parser::parseDtype(Type &dtype) {
  if (!tok.is(Token::Identifier))
    return expected("a dtype (f32, i32, u8, ...)");
  StringRef s = tok.spelling;
  if (s == "f16")
    dtype = builder.getF16Type();
  else if (s == "bf16")
    dtype = builder.getBF16Type();
  else if (s == "f32")
    dtype = builder.getF32Type();
  else if (s == "f64")
    dtype = builder.getF64Type();
  else if (s == "bool")
    dtype = builder.getI1Type();
  else if (s == "index")
    dtype = builder.getIndexType();
  else if ((s.starts_with("i") || s.starts_with("u")) && s.size() > 1) {
    unsigned width = 0;
    if (s.drop_front().getAsInteger(10, width) ||
        !llvm::is_contained({1u, 8u, 16u, 32u, 64u}, width))
      return error("unknown dtype '" + s +
                   "'; integer dtypes are i1/u1, i8/u8, i16/u16, i32/u32 "
                   "and i64/u64");
    dtype = IntegerType::get(ctx, width,
                             s[0] == 'u' ? IntegerType::Unsigned
                                         : IntegerType::Signless);
  } else {
    return error("unknown dtype '" + s +
                 "'; expected f16, bf16, f32, f64, bool, index, iN or uN");
  }
  consume();
  return success();
}

ParseResult Parser::parsePositiveInt(int64_t &value, const llvm::Twine &what) {
  if (!tok.is(Token::Integer))
    return expected(what);
  if (tok.spelling.getAsInteger(10, value) || value <= 0)
    return error(what + " must be a positive integer that fits in 64 bits");
  consume();
  return success();
}

/// domain ::= 'tensor' '(' dtype ',' '[' int {',' int} ']' ')'
///          | 'sequence' '(' domain ',' int ')'
///          | 'table' '(' ident ':' domain {',' ident ':' domain} ')'
///          | 'dist' '(' int ')'
///          | 'scalar' '(' dtype ')'
ParseResult Parser::parseDomain(Type &domain) {
  if (!tok.is(Token::Identifier))
    return expected("a domain (tensor, sequence, table, dist or scalar)");
  StringRef kind = tok.spelling;
  Location kindLoc = loc();
  // Domains nest (sequence of table of sequence ...); bound the recursion so
  // that hostile input cannot exhaust the stack.
  if (domainDepth >= kMaxDomainDepth)
    return error("domain nested more than " + llvm::Twine(kMaxDomainDepth) +
                 " levels deep");
  struct DepthGuard {
    unsigned &depth;
    explicit DepthGuard(unsigned &d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
  } depthGuard(domainDepth);
  if (!llvm::is_contained({"tensor", "sequence", "table", "dist", "scalar"},
                          kind))
    return error("unknown domain '" + kind +
                 "'; expected tensor, sequence, table, dist or scalar");
  consume();
  if (expect(Token::LParen, ("after '" + kind + "'").str()))
    return failure();
  if (kind == "tensor") {
    Type dtype;
    SmallVector<int64_t> dims;
    if (parseDtype(dtype) || expect(Token::Comma, "after the tensor's dtype") ||
        expect(Token::LSquare, "to open the tensor's shape"))
      return failure();
    if (!tok.is(Token::RSquare)) {
      do {
        int64_t dim;
        if (parsePositiveInt(dim, "a dimension"))
          return failure();
        dims.push_back(dim);
      } while (consumeIf(Token::Comma));
    }
    if (expect(Token::RSquare, "to close the tensor's shape"))
      return failure();
    domain = RankedTensorType::get(dims, dtype);
  } else if (kind == "sequence") {
    Type element;
    int64_t maxLen;
    if (parseDomain(element) ||
        expect(Token::Comma, "after the sequence's element domain") ||
        parsePositiveInt(maxLen, "the sequence's max_len"))
      return failure();
    domain = l3::SequenceType::get(ctx, element, maxLen);
  } else if (kind == "table") {
    SmallVector<StringAttr> names;
    SmallVector<Type> domains;
    do {
      StringRef column;
      Type columnDomain;
      if (parseIdent(column, "a column name") ||
          expect(Token::Colon, "after column name") ||
          parseDomain(columnDomain))
        return failure();
      names.push_back(builder.getStringAttr(column));
      domains.push_back(columnDomain);
    } while (consumeIf(Token::Comma));
    domain = l3::TableType::getChecked(
        [&] { return emitError(kindLoc); }, ctx, ArrayRef<StringAttr>(names),
        ArrayRef<Type>(domains));
    if (!domain)
      return failure();
  } else if (kind == "dist") {
    int64_t classes;
    if (parsePositiveInt(classes, "the number of classes"))
      return failure();
    domain = l3::DistType::get(ctx, classes);
  } else { // scalar
    Type dtype;
    if (parseDtype(dtype))
      return failure();
    domain = l3::ScalarType::getChecked([&] { return emitError(kindLoc); },
                                        ctx, dtype);
    if (!domain)
      return failure();
  }
  return expect(Token::RParen, ("to close '" + kind + "('").str());
}

//===----------------------------------------------------------------------===//
// References and numbers
//===----------------------------------------------------------------------===//

/// ref ::= ident { '.' ident }
ParseResult Parser::parseRef(SymbolRefAttr &ref, Location &refLoc) {
  refLoc = loc();
  StringRef root;
  if (parseIdent(root, "a reference (e.g. mnist.images)"))
    return failure();
  SmallVector<FlatSymbolRefAttr> nested;
  while (consumeIf(Token::Dot)) {
    StringRef member;
    if (parseIdent(member, "a member name after '.'"))
      return failure();
    nested.push_back(FlatSymbolRefAttr::get(ctx, member));
  }
  ref = SymbolRefAttr::get(builder.getStringAttr(root), nested);
  return success();
}

/// real ::= integer | float   (`1`, `0.5`, `1e-4`)
ParseResult Parser::parseReal(double &value, const llvm::Twine &what) {
  if (tok.is(Token::Suffixed))
    return error("malformed number '" + tok.spelling + "': unexpected suffix '" +
                 tok.getSuffix() + "'");
  if (!tok.is(Token::Integer) && !tok.is(Token::Float))
    return expected(what);
  std::string text = tok.spelling.str();
  errno = 0;
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  if (errno == ERANGE || !std::isfinite(value) ||
      end != text.c_str() + text.size())
    return error("number '" + tok.spelling + "' is out of range");
  consume();
  return success();
}

//===----------------------------------------------------------------------===//
// model
//===----------------------------------------------------------------------===//

/// model ::= 'model' ident '{' { hatch | 'in' ':' ref [':' domain]
///                                   | 'out' ':' domain
///                                   | 'properties' ':' '[' [property
///                                         {',' property}] ']' } '}'
ParseResult Parser::parseModel(ArrayAttr hints) {
  consume(); // 'model'
  Location nameLoc = loc();
  StringRef name;
  if (parseIdent(name, "a name after 'model'"))
    return failure();
  Location open = loc();
  if (expect(Token::LBrace, "to open the model declaration's body"))
    return failure();
  SmallVector<Attribute> allHints(hints ? hints.getValue()
                                        : ArrayRef<Attribute>());
  SymbolRefAttr inRef;
  Location inLoc = nameLoc;
  currentModel = nameLoc;
  Type inDomain, outDomain;
  SmallVector<Attribute> constraints;
  bool sawProperties = false;
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(/*goalIsEntry=*/false))
      return unclosedBody("model", name, open);
    if (tok.is(Token::HashLSquare)) {
      if (parseHatch(allHints))
        return failure();
      continue;
    }
    Location keyLoc = loc();
    StringRef key;
    if (parseIdent(key, "'in', 'out', 'properties' or '}'"))
      return failure();
    auto duplicate = [&](bool seen) -> ParseResult {
      if (seen)
        return emitError(keyLoc, "duplicate '") << key << "' in model '"
                                                 << name << "'";
      return success();
    };
    if (key == "in") {
      if (duplicate(bool(inRef)) || expect(Token::Colon, "after 'in'") ||
          parseRef(inRef, inLoc))
        return failure();
      if (consumeIf(Token::Colon) && parseDomain(inDomain))
        return failure();
    } else if (key == "out") {
      if (duplicate(bool(outDomain)) || expect(Token::Colon, "after 'out'") ||
          parseDomain(outDomain))
        return failure();
    } else if (key == "properties") {
      if (duplicate(sawProperties) ||
          expect(Token::Colon, "after 'properties'") ||
          expect(Token::LSquare, "to open the property list"))
        return failure();
      sawProperties = true;
      if (!tok.is(Token::RSquare)) {
        do {
          if (parseProperty(constraints))
            return failure();
        } while (consumeIf(Token::Comma));
      }
      if (expect(Token::RSquare, "to close the property list"))
        return failure();
    } else {
      return emitError(keyLoc, "unknown model entry '")
             << key << "'; expected in, out or properties";
    }
  }
  Location close = loc();
  consume(); // '}'
  if (!inRef)
    return emitError(close, "model '") << name << "' has no 'in:' entry";
  if (!outDomain)
    return emitError(close, "model '") << name << "' has no 'out:' entry";
  l3::ModelOp::create(
      builder, nameLoc, builder.getStringAttr(name), inRef,
      inDomain ? TypeAttr::get(inDomain) : TypeAttr(), TypeAttr::get(outDomain),
      builder.getArrayAttr(constraints),
      allHints.empty() ? ArrayAttr() : builder.getArrayAttr(allHints));
  noteRef(nameLoc, inRef, inLoc);
  assignHatches(nameLoc);
  return success();
}

/// property ::= 'depth' '(' int ')' | 'width' '(' int ')' | 'causal'
///            | 'autoregressive' | 'equivariant' '(' (ident | string) ')'
///            | 'param_budget' '(' count ')' | 'latency_budget' '(' time ')'
ParseResult Parser::parseProperty(SmallVectorImpl<Attribute> &constraints) {
  if (!tok.is(Token::Identifier))
    return expected("a property (depth, width, causal, ...)");
  StringRef kind = tok.spelling;
  propertyUses[currentModel].push_back({kind, loc()});
  if (kind == "causal" || kind == "autoregressive") {
    consume();
    constraints.push_back(kind == "causal"
                              ? Attribute(l3::CausalAttr::get(ctx))
                              : Attribute(l3::AutoregressiveAttr::get(ctx)));
    return success();
  }
  if (!llvm::is_contained({"depth", "width", "equivariant", "param_budget",
                           "latency_budget"},
                          kind))
    return error("unknown property '" + kind +
                 "'; expected depth, width, causal, autoregressive, "
                 "equivariant, param_budget or latency_budget");
  consume();
  if (expect(Token::LParen, ("after '" + kind + "'").str()))
    return failure();
  if (kind == "depth" || kind == "width") {
    int64_t n;
    if (parsePositiveInt(n, (kind + "'s value").str()))
      return failure();
    constraints.push_back(kind == "depth"
                              ? Attribute(l3::DepthAttr::get(ctx, n))
                              : Attribute(l3::WidthAttr::get(ctx, n)));
  } else if (kind == "equivariant") {
    std::string group;
    if (tok.is(Token::Identifier))
      group = tok.spelling.str();
    else if (tok.is(Token::String))
      group = tok.getStringValue();
    else
      return expected("a symmetry group name");
    consume();
    constraints.push_back(l3::EquivariantAttr::get(ctx, group));
  } else if (kind == "param_budget") {
    if (!tok.is(Token::Integer) && !tok.is(Token::Suffixed))
      return expected("a parameter count (e.g. 500K)");
    std::optional<uint64_t> count = synpl::parseCount(tok.spelling);
    if (!count)
      return error("malformed parameter count '" + tok.spelling +
                   "'; expected an integer with an optional K, M or G "
                   "suffix");
    consume();
    constraints.push_back(l3::ParamBudgetAttr::get(ctx, *count));
  } else { // latency_budget
    if (!tok.is(Token::Suffixed))
      return expected("a duration with a unit (e.g. 5ms, 250us, 1s)");
    StringRef unit = tok.getSuffix();
    double scale = llvm::StringSwitch<double>(unit)
                       .Case("ms", 1.0)
                       .Case("us", 1e-3)
                       .Case("s", 1e3)
                       .Default(-1);
    double value = 0;
    if (scale < 0 || tok.getNumberPart().getAsDouble(value))
      return error("malformed duration '" + tok.spelling +
                   "'; expected a number followed by ms, us or s");
    consume();
    constraints.push_back(l3::LatencyBudgetAttr::get(ctx, value * scale));
  }
  return expect(Token::RParen, ("to close '" + kind + "('").str());
}

//===----------------------------------------------------------------------===//
// loss
//===----------------------------------------------------------------------===//

/// loss ::= 'loss' ident '{' { hatch | term } 'combine' ':' combinator '}'
/// term ::= ident ':' kind '(' args ')' [',' 'weight' ':' real]
ParseResult Parser::parseLoss(ArrayAttr hints) {
  consume(); // 'loss'
  Location nameLoc = loc();
  StringRef name;
  if (parseIdent(name, "a name after 'loss'"))
    return failure();
  Location open = loc();
  if (expect(Token::LBrace, "to open the loss declaration's body"))
    return failure();
  auto loss = l3::LossOp::create(
      builder, nameLoc, builder.getStringAttr(name),
      l3::CombinatorAttr::get(ctx, l3::Combinator::WeightedSum), hints);
  Block &body = loss.getBody().emplaceBlock();
  SmallVector<Attribute> allHints(hints ? hints.getValue()
                                        : ArrayRef<Attribute>());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body);
  std::optional<l3::Combinator> combine;
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(/*goalIsEntry=*/false))
      return unclosedBody("loss", name, open);
    if (tok.is(Token::HashLSquare)) {
      if (parseHatch(allHints))
        return failure();
      continue;
    }
    Location keyLoc = loc();
    StringRef key;
    if (parseIdent(key, "a term name, 'combine' or '}'"))
      return failure();
    if (expect(Token::Colon, ("after '" + key + "'").str()))
      return failure();
    if (key == "combine") {
      if (combine)
        return emitError(keyLoc, "duplicate 'combine' in loss '")
               << name << "'";
      if (!tok.is(Token::Identifier))
        return expected("a combinator (weighted_sum, sum, mean or max)");
      combine = l3::symbolizeCombinator(tok.spelling);
      if (!combine)
        return error("unknown combinator '" + tok.spelling +
                     "'; expected weighted_sum, sum, mean or max");
      consume();
      continue;
    }
    if (combine)
      return emitError(keyLoc, "loss term '")
             << key << "' after 'combine'; 'combine' comes last";
    if (parseTerm(key, keyLoc))
      return failure();
  }
  Location close = loc();
  consume(); // '}'
  if (!combine)
    return emitError(close, "loss '")
           << name << "' has no 'combine: <combinator>' entry";
  loss.setCombineAttr(l3::CombinatorAttr::get(ctx, *combine));
  assignHatches(nameLoc);
  if (!allHints.empty())
    loss.setHintsAttr(builder.getArrayAttr(allHints));
  return success();
}

ParseResult Parser::parseTermWeight(double &weight) {
  weight = 1.0;
  if (tok.isKeyword("weight") && peek().is(Token::Colon))
    return error("expected ',' before 'weight'");
  if (!consumeIf(Token::Comma))
    return success();
  if (!tok.isKeyword("weight"))
    return expected("'weight' after ','");
  consume();
  if (expect(Token::Colon, "after 'weight'"))
    return failure();
  return parseReal(weight, "a weight (e.g. 1.0)");
}

ParseResult Parser::parseTerm(StringRef name, Location nameLoc) {
  if (!tok.is(Token::Identifier))
    return expected("a loss kind (divergence, norm, constraint, "
                    "reconstruction, contrastive or custom)");
  StringRef kind = tok.spelling;
  if (!llvm::is_contained({"divergence", "norm", "constraint",
                           "reconstruction", "contrastive", "custom"},
                          kind))
    return error("unknown loss kind '" + kind +
                 "'; expected divergence, norm, constraint, reconstruction, "
                 "contrastive or custom");
  consume();
  if (expect(Token::LParen, ("after '" + kind + "'").str()))
    return failure();
  StringAttr sym = builder.getStringAttr(name);
  SmallVector<RefUse, 3> refs;
  auto ref = [&]() -> ParseResult {
    SymbolRefAttr r;
    Location l = nameLoc;
    if (parseRef(r, l))
      return failure();
    refs.push_back({r, l});
    return success();
  };
  auto comma = [&]() { return expect(Token::Comma, "between arguments"); };

  double p = 0;
  Attribute rhs;
  l3::CmpPredicate predicate = l3::CmpPredicate::LT;
  std::string fn;
  if (kind == "divergence" || kind == "reconstruction") {
    if (ref() || comma() || ref())
      return failure();
  } else if (kind == "contrastive") {
    if (ref() || comma() || ref() || comma() || ref())
      return failure();
  } else if (kind == "norm") {
    if (ref() || comma())
      return failure();
    // `p=1` as in the spec's trace, or a bare `1`.
    if (tok.isKeyword("p")) {
      consume();
      if (expect(Token::Equal, "after 'p'"))
        return failure();
    }
    if (parseReal(p, "the norm's p (e.g. p=1)"))
      return failure();
  } else if (kind == "constraint") {
    if (ref())
      return failure();
    switch (tok.kind) {
    case Token::Less: predicate = l3::CmpPredicate::LT; break;
    case Token::LessEqual: predicate = l3::CmpPredicate::LE; break;
    case Token::Greater: predicate = l3::CmpPredicate::GT; break;
    case Token::GreaterEqual: predicate = l3::CmpPredicate::GE; break;
    case Token::EqualEqual: predicate = l3::CmpPredicate::EQ; break;
    case Token::NotEqual: predicate = l3::CmpPredicate::NE; break;
    default:
      return expected("a comparison (<, <=, >, >=, == or !=)");
    }
    consume();
    if (tok.is(Token::Identifier)) {
      if (ref())
        return failure();
      rhs = refs.back().ref;
    } else {
      double value;
      if (parseReal(value, "a number or a reference"))
        return failure();
      rhs = builder.getF64FloatAttr(value);
    }
  } else { // custom
    if (tok.is(Token::String))
      fn = tok.getStringValue();
    else if (tok.is(Token::Identifier))
      fn = tok.spelling.str();
    else
      return expected("the custom loss's name");
    consume();
    if (comma())
      return failure();
    if (!tok.isKeyword("reads"))
      return expected("'reads'");
    consume();
    if (expect(Token::Colon, "after 'reads'") ||
        expect(Token::LSquare, "to open the list of reads"))
      return failure();
    if (!tok.is(Token::RSquare)) {
      do {
        if (ref())
          return failure();
      } while (consumeIf(Token::Comma));
    }
    if (expect(Token::RSquare, "to close the list of reads"))
      return failure();
  }
  if (expect(Token::RParen, ("to close '" + kind + "('").str()))
    return failure();
  double weightValue;
  if (parseTermWeight(weightValue))
    return failure();
  FloatAttr weight = builder.getF64FloatAttr(weightValue);

  if (kind == "divergence")
    l3::DivergenceOp::create(builder, nameLoc, sym, refs[0].ref, refs[1].ref,
                             weight);
  else if (kind == "reconstruction")
    l3::ReconstructionOp::create(builder, nameLoc, sym, refs[0].ref,
                                 refs[1].ref, weight);
  else if (kind == "contrastive")
    l3::ContrastiveOp::create(builder, nameLoc, sym, refs[0].ref, refs[1].ref,
                              refs[2].ref, weight);
  else if (kind == "norm")
    l3::NormOp::create(builder, nameLoc, sym, refs[0].ref,
                       builder.getF64FloatAttr(p), weight);
  else if (kind == "constraint")
    l3::ConstraintOp::create(builder, nameLoc, sym, refs[0].ref,
                             l3::CmpPredicateAttr::get(ctx, predicate), rhs,
                             weight);
  else {
    SmallVector<Attribute> reads;
    for (const RefUse &use : refs)
      reads.push_back(use.ref);
    l3::CustomOp::create(builder, nameLoc, sym, builder.getStringAttr(fn),
                         builder.getArrayAttr(reads), weight);
  }
  for (const RefUse &use : refs)
    noteRef(nameLoc, use.ref, use.loc);
  return success();
}

//===----------------------------------------------------------------------===//
// goal
//===----------------------------------------------------------------------===//

/// goal ::= 'goal' ':' ( 'minimize' '(' ref ')' | 'maximize' '(' ref ')'
///                     | 'pareto' '(' '[' ref {',' ref} ']' ')' )
ParseResult Parser::parseGoal() {
  Location goalAt = loc();
  consume(); // 'goal'
  if (expect(Token::Colon, "after 'goal'"))
    return failure();
  if (!tok.is(Token::Identifier))
    return expected("minimize, maximize or pareto");
  std::optional<l3::GoalKind> kind = l3::symbolizeGoalKind(tok.spelling);
  if (!kind)
    return error("unknown goal '" + tok.spelling +
                 "'; expected minimize, maximize or pareto");
  consume();
  if (expect(Token::LParen, "after the goal kind"))
    return failure();
  SmallVector<RefUse, 3> refs;
  auto ref = [&]() -> ParseResult {
    SymbolRefAttr r;
    Location l = goalAt;
    if (parseRef(r, l))
      return failure();
    refs.push_back({r, l});
    return success();
  };
  if (*kind == l3::GoalKind::Pareto) {
    if (expect(Token::LSquare, "to open pareto's list of targets"))
      return failure();
    do {
      if (ref())
        return failure();
    } while (consumeIf(Token::Comma));
    if (expect(Token::RSquare, "to close pareto's list of targets"))
      return failure();
  } else if (ref()) {
    return failure();
  }
  if (expect(Token::RParen, "to close the goal"))
    return failure();
  // One goal per program is L3.4, checked by the verifier; the parser
  // builds every goal it reads so that check sees them.
  SmallVector<Attribute> targets;
  for (const RefUse &use : refs) {
    targets.push_back(use.ref);
    noteRef(goalAt, use.ref, use.loc);
  }
  l3::GoalOp::create(builder, goalAt, l3::GoalKindAttr::get(ctx, *kind),
                     builder.getArrayAttr(targets));
  return success();
}

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

LogicalResult Parser::verify(ModuleOp module) {
  bool forwarding = false;
  // The l3 verifiers locate a reference error at the op that reads the ref;
  // the .syn text has a better place: the reference itself.
  ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &diag) -> LogicalResult {
    if (forwarding || diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    std::string message = diag.str();
    std::optional<Location> target =
        propertyLocFor(diag.getLocation(), message);
    // "escape hatch #l3.hint<l3::force, "x"> targets layer 'l3'".
    for (const HatchUse &hatch : hatchUses) {
      if (target || hatch.owner != diag.getLocation())
        continue;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << hatch.hint;
      if (StringRef(message).contains(text))
        target = hatch.loc;
    }
    if (auto it = refUses.find(diag.getLocation());
        !target && it != refUses.end())
      for (const RefUse &candidate : it->second)
        if (mentions(message, candidate.ref)) {
          target = candidate.loc;
          break;
        }
    if (!target || *target == diag.getLocation())
      return failure();
    forwarding = true;
    {
      InFlightDiagnostic moved = emitError(*target) << message;
      for (Diagnostic &note : diag.getNotes())
        moved.attachNote(note.getLocation()) << note.str();
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

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> synpl::parseSyn(llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context) {
  context->loadDialect<l3::L3Dialect>();
  Parser parser(sourceMgr, context);
  OwningOpRef<ModuleOp> module = parser.parseModule();
  if (!module || failed(parser.verify(*module)))
    return nullptr;
  return module;
}

void synpl::registerImportSynTranslation() {
  static TranslateToMLIRRegistration registration(
      "import-syn", "read the .syn surface syntax into the l3 dialect",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return OwningOpRef<Operation *>(
            parseSyn(sourceMgr, context).release());
      },
      [](DialectRegistry &registry) { registry.insert<l3::L3Dialect>(); });
}
