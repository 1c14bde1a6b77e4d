//===- Parser.cpp - Recursive-descent parser of the .syn L3 and L2 forms --===//
//
// Builds l3 ops (and, for `methods for`, l2 ops; the L1 forms are in
// ParserL1*.cpp) straight from the tokens; every op is located at the token
// that names it (FileLineColLoc), and the refs each op reads are remembered
// so that a dangling-reference diagnostic from the l3 verifiers can be
// moved onto the reference as written (`mnist.labelz`), not the whole term.
// l2 diagnostics located at a whole `methods for` block are moved onto the
// method they are about (ParserVerify.cpp). This file holds the L3 forms
// and the entry points; a `methods for` block's values and method calls
// are ParserMethods.cpp's, its layers ParserLayers.cpp's.
//
// Grammar: docs/syn.md.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "ParserUtil.h"
#include "synpl/Frontend/Syn.h"

#include "synpl/Dialect/L2/L2Dialect.h"
#include "synpl/Dialect/L2/L2Model.h"
#include "synpl/Dialect/L2/L2Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Dialect/L1/L1Dialect.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
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
using namespace synpl::syn::detail;

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Parser::parseModule() {
  OwningOpRef<ModuleOp> module = ModuleOp::create(locOf(tok.getLoc()));
  builder.setInsertionPointToEnd(module->getBody());
  while (!tok.is(Token::Eof))
    if (failed(parseTopLevel()))
      return nullptr;
  if (failed(finishL1Program(*module)))
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
  if (tok.isKeyword("methods")) {
    if (!hints.empty())
      return emitError(firstHatch,
                       "an escape hatch cannot be attached to 'methods for'; "
                       "attach it to the model it is for");
    return parseMethods();
  }
  static constexpr StringRef kL1Forms[] = {"system",       "actor",
                                           "stage",        "tensor_graph",
                                           "pipeline",     "schedule"};
  if (tok.is(Token::Identifier) && llvm::is_contained(kL1Forms, tok.spelling)) {
    if (!hints.empty())
      return emitError(firstHatch, "an escape hatch cannot be attached to '")
             << tok.spelling << "'; L1 forms are already placed";
    StringRef form = tok.spelling;
    if (form != "system")
      sawL1Placement = true;
    if (form == "system")
      return parseSystem();
    if (form == "actor")
      return parseActor();
    if (form == "stage")
      return parseStage();
    if (form == "tensor_graph")
      return parseTensorGraph();
    if (form == "pipeline")
      return parsePipeline();
    return parseSchedule();
  }
  if (tok.isKeyword("goal")) {
    if (!hints.empty())
      return emitError(firstHatch,
                       "an escape hatch cannot be attached to the goal; "
                       "attach it to a data, model or loss declaration");
    return parseGoal();
  }
  if (tok.is(Token::Identifier))
    return error("unknown keyword '" + tok.spelling +
                 "'; expected data, model, loss, goal, methods, system, "
                 "actor, stage, tensor_graph, pipeline or schedule");
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
  StringRef name;
  Location nameLoc = loc(), open = loc();
  if (parseDeclarationHead("data", name, nameLoc, open))
    return failure();
  auto data = l3::DataOp::create(builder, nameLoc, builder.getStringAttr(name),
                                 hints);
  Block &body = data.getBody().emplaceBlock();
  SmallVector<Attribute> allHints(hints ? hints.getValue()
                                        : ArrayRef<Attribute>());
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body);
  auto field = [&]() -> ParseResult {
    Location fieldLoc = loc();
    StringRef field;
    if (parseIdent(field, "a field name or '}'"))
      return failure();
    if (expect(Token::Colon, "after field name"))
      return failure();
    Type domain;
    if (parseDomain(domain))
      return failure();
    auto fieldOp = l3::FieldOp::create(builder, fieldLoc,
                                       builder.getStringAttr(field),
                                       TypeAttr::get(domain));
    // The spec's L1 data form: `images : tensor(...) @ ssd_0, path: "..."`.
    if (tok.is(Token::At))
      return parseDataBinding(fieldOp);
    return success();
  };
  if (parseDeclarationBody("data", name, open, /*goalIsEntry=*/true, allHints,
                           field))
    return failure();
  assignHatches(nameLoc);
  if (!allHints.empty())
    data.setHintsAttr(builder.getArrayAttr(allHints));
  dataDecls.push_back(data);
  return success();
}

//===----------------------------------------------------------------------===//
// Domains
//===----------------------------------------------------------------------===//

/// dtype ::= 'f16' | 'bf16' | 'f32' | 'f64' | 'i'N | 'u'N | 'bool' | 'index'
Type Parser::namedDtype(MLIRContext *ctx, StringRef s) {
  Builder b(ctx);
  if (s == "f16")
    return b.getF16Type();
  if (s == "bf16")
    return b.getBF16Type();
  if (s == "f32")
    return b.getF32Type();
  if (s == "f64")
    return b.getF64Type();
  if (s == "bool")
    return b.getI1Type();
  unsigned width = 0;
  if ((s.starts_with("i") || s.starts_with("u")) && s.size() > 1 &&
      !s.drop_front().getAsInteger(10, width) &&
      llvm::is_contained({1u, 8u, 16u, 32u, 64u}, width))
    return IntegerType::get(ctx, width,
                            s[0] == 'u' ? IntegerType::Unsigned
                                        : IntegerType::Signless);
  return Type();
}

ParseResult Parser::parseDtype(Type &dtype) {
  if (!tok.is(Token::Identifier))
    return expected("a dtype (f32, i32, u8, ...)");
  StringRef s = tok.spelling;
  if (s == "index")
    dtype = builder.getIndexType();
  else
    dtype = namedDtype(ctx, s);
  if (!dtype) {
    if ((s.starts_with("i") || s.starts_with("u")) && s.size() > 1)
      return error("unknown dtype '" + s +
                   "'; integer dtypes are i1/u1, i8/u8, i16/u16, i32/u32 "
                   "and i64/u64");
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
  StringRef name;
  Location nameLoc = loc(), open = loc();
  if (parseDeclarationHead("model", name, nameLoc, open))
    return failure();
  SmallVector<Attribute> allHints(hints ? hints.getValue()
                                        : ArrayRef<Attribute>());
  SymbolRefAttr inRef;
  Location inLoc = nameLoc;
  currentModel = nameLoc;
  Type inDomain, outDomain;
  SmallVector<Attribute> constraints;
  bool sawProperties = false;
  auto entry = [&]() -> ParseResult {
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
    return success();
  };
  Location close = nameLoc;
  if (parseDeclarationBody("model", name, open, /*goalIsEntry=*/false, allHints,
                           entry, &close))
    return failure();
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
  StringRef name;
  Location nameLoc = loc(), open = loc();
  if (parseDeclarationHead("loss", name, nameLoc, open))
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
  auto entry = [&]() -> ParseResult {
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
      return success();
    }
    if (combine)
      return emitError(keyLoc, "loss term '")
             << key << "' after 'combine'; 'combine' comes last";
    return parseTerm(key, keyLoc);
  };
  Location close = nameLoc;
  if (parseDeclarationBody("loss", name, open, /*goalIsEntry=*/false, allHints,
                           entry, &close))
    return failure();
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
// Entry points
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> synpl::parseSyn(llvm::SourceMgr &sourceMgr,
                                      MLIRContext *context) {
  context->loadDialect<l3::L3Dialect, l2::L2Dialect, l1::L1Dialect,
                      cf::ControlFlowDialect>();
  Parser parser(sourceMgr, context);
  OwningOpRef<ModuleOp> module = parser.parseModule();
  if (!module || failed(parser.verify(*module)))
    return nullptr;
  return module;
}

void synpl::registerImportSynTranslation() {
  static TranslateToMLIRRegistration registration(
      "import-syn",
      "read the .syn surface syntax into the l3, l2 and l1 dialects",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return OwningOpRef<Operation *>(
            parseSyn(sourceMgr, context).release());
      },
      [](DialectRegistry &registry) {
        registry.insert<l3::L3Dialect, l2::L2Dialect, l1::L1Dialect,
                        cf::ControlFlowDialect>();
      });
}
