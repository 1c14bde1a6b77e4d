//===- Parser.cpp - Recursive-descent parser of the .syn L3 and L2 forms --===//
//
// Builds l3 ops (and, for `methods for`, l2 ops; the L1 forms are in
// ParserL1.cpp) straight from the tokens; every op is located at the token that names it (FileLineColLoc), and the
// refs each op reads are remembered so that a dangling-reference diagnostic
// from the l3 verifiers can be moved onto the reference as written
// (`mnist.labelz`), not the whole term. l2 diagnostics located at a whole
// `methods for` block are moved onto the method they are about.
//
// Grammar: docs/syn.md.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
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
// methods for (L2)
//===----------------------------------------------------------------------===//

/// `a, b or c` (or `a, b and c`).
static std::string listWords(ArrayRef<StringRef> words,
                             StringRef conjunction = "or") {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i)
      out += i + 1 == words.size() ? (" " + conjunction + " ").str() : ", ";
    out += words[i].str();
  }
  return out;
}

/// value ::= int | real | count | string | ident [ '(' args ')' ]
///         | ('sequential' | 'residual') '[' [ value {',' value} ] ']'
///         | '[' [ value {',' value} ] ']' | '{' args '}'
/// A layer in a list may carry escape hatches: `#[l1::on(gpu_1)] linear(...)`.
ParseResult Parser::parseValue(SynValue &value) {
  if (valueDepth >= kMaxDomainDepth)
    return error("method arguments nested more than " +
                 llvm::Twine(kMaxDomainDepth) + " levels deep");
  struct DepthGuard {
    unsigned &depth;
    explicit DepthGuard(unsigned &d) : depth(d) { ++depth; }
    ~DepthGuard() { --depth; }
  } depthGuard(valueDepth);
  if (tok.is(Token::HashLSquare)) {
    value.hintsLoc = loc();
    size_t before = hatchUses.size();
    if (parseHatches(value.hints))
      return failure();
    // A layer's hatch is verified with the layer op, where it lands.
    hatchUses.truncate(before);
  }
  value.tok = tok;
  value.loc = loc();
  value.close = value.loc;
  switch (tok.kind) {
  case Token::Integer:
  case Token::Suffixed:
    value.kind = SynValue::Int;
    consume();
    return success();
  case Token::Float:
    value.kind = SynValue::Real;
    consume();
    return success();
  case Token::String:
    value.kind = SynValue::Str;
    consume();
    return success();
  case Token::Identifier:
    consume();
    // `sequential [...]`, `residual [...]`: the spec's trace writes the list
    // without parentheses; it reads as the call's one argument.
    if ((value.tok.spelling == "sequential" ||
         value.tok.spelling == "residual") &&
        tok.is(Token::LSquare)) {
      value.kind = SynValue::Call;
      SynArg arg{StringRef(), loc(), SynValue(loc())};
      if (parseValue(arg.value))
        return failure();
      value.close = arg.value.close;
      value.args.push_back(std::move(arg));
      return success();
    }
    if (!tok.is(Token::LParen)) {
      value.kind = SynValue::Word;
      return success();
    }
    value.kind = SynValue::Call;
    consume(); // '('
    return parseArgs(value, Token::RParen);
  case Token::LSquare:
    value.kind = SynValue::List;
    consume();
    while (!tok.is(Token::RSquare)) {
      value.items.emplace_back(loc());
      if (parseValue(value.items.back()))
        return failure();
      if (!consumeIf(Token::Comma))
        break;
    }
    value.close = loc();
    return expect(Token::RSquare, "to close the list");
  case Token::LBrace:
    value.kind = SynValue::Record;
    consume();
    return parseArgs(value, Token::RBrace);
  default:
    return expected("a value (a number, a name, a method or a list)");
  }
}

/// args ::= [ arg {',' arg} ]     arg ::= [ ident ':' ] value
ParseResult Parser::parseArgs(SynValue &call, Token::Kind close) {
  while (!tok.is(close)) {
    SynArg arg{StringRef(), loc(), SynValue(loc())};
    if (tok.is(Token::Identifier) && peek().is(Token::Colon)) {
      arg.key = tok.spelling;
      consume();
      consume(); // ':'
    }
    if (parseValue(arg.value))
      return failure();
    call.args.push_back(std::move(arg));
    if (!consumeIf(Token::Comma))
      break;
  }
  call.close = loc();
  return expect(close, close == Token::RParen ? "to close the argument list"
                                              : "to close the record");
}

ParseResult Parser::bindArgs(const SynValue &call, ArrayRef<StringRef> params,
                             SmallVectorImpl<const SynValue *> &slots) {
  StringRef name = call.tok.spelling;
  slots.assign(params.size(), nullptr);
  size_t next = 0;
  for (const SynArg &arg : call.args) {
    size_t index;
    if (arg.key.empty()) {
      while (next < params.size() && slots[next])
        ++next;
      if (next == params.size()) {
        if (params.empty())
          return emitError(arg.value.loc, "'")
                 << name << "' takes no arguments";
        return emitError(arg.value.loc, "too many arguments to '")
               << name << "'; it takes " << listWords(params, "and");
      }
      index = next;
    } else {
      auto it = llvm::find(params, arg.key);
      if (it == params.end()) {
        if (params.empty())
          return emitError(arg.keyLoc, "'") << name << "' takes no arguments";
        return emitError(arg.keyLoc, "unknown argument '")
               << arg.key << "' to '" << name << "'; expected "
               << listWords(params);
      }
      index = it - params.begin();
      if (slots[index])
        return emitError(arg.keyLoc, "duplicate argument '")
               << arg.key << "' to '" << name << "'";
    }
    slots[index] = &arg.value;
  }
  return success();
}

ParseResult Parser::need(const SynValue &call, const SynValue *arg,
                         StringRef param) {
  if (arg)
    return success();
  return emitError(call.close, "'")
         << call.tok.spelling << "' needs argument '" << param << "'";
}

static std::string describeValue(const SynValue &v) {
  switch (v.kind) {
  case SynValue::Call:
    return ("'" + v.tok.spelling + "(...)'").str();
  case SynValue::List:
    return "a list";
  case SynValue::Record:
    return "a record";
  default:
    return ("'" + v.tok.spelling + "'").str();
  }
}

FailureOr<int64_t> Parser::intArg(const SynValue *v, StringRef param) {
  int64_t value = 0;
  if (v->kind == SynValue::Int) {
    if (v->tok.is(Token::Integer)) {
      if (!v->tok.spelling.getAsInteger(10, value))
        return value;
    } else if (std::optional<uint64_t> n = synpl::parseCount(v->tok.spelling);
               n && *n <= uint64_t(INT64_MAX)) {
      return int64_t(*n);
    }
    return emitError(v->loc, "argument '")
           << param << "' must be an integer that fits in 64 bits (a count "
           << "may end in K, M or G), got " << describeValue(*v);
  }
  return emitError(v->loc, "argument '")
         << param << "' must be an integer, got " << describeValue(*v);
}

FailureOr<double> Parser::realArg(const SynValue *v, StringRef param) {
  if ((v->kind == SynValue::Int && v->tok.is(Token::Integer)) ||
      v->kind == SynValue::Real) {
    std::string text = v->tok.spelling.str();
    errno = 0;
    char *end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (errno != ERANGE && std::isfinite(value) &&
        end == text.c_str() + text.size())
      return value;
    return emitError(v->loc, "number '")
           << v->tok.spelling << "' is out of range";
  }
  return emitError(v->loc, "argument '")
         << param << "' must be a number, got " << describeValue(*v);
}

FailureOr<bool> Parser::boolArg(const SynValue *v, StringRef param) {
  if (v->kind == SynValue::Word &&
      (v->tok.spelling == "true" || v->tok.spelling == "false"))
    return v->tok.spelling == "true";
  return emitError(v->loc, "argument '")
         << param << "' must be true or false, got " << describeValue(*v);
}

FailureOr<StringRef> Parser::wordArg(const SynValue *v, StringRef param,
                                     ArrayRef<StringRef> known) {
  if (v->kind == SynValue::Word && llvm::is_contained(known, v->tok.spelling))
    return v->tok.spelling;
  if (v->kind == SynValue::Word)
    return emitError(v->loc, "unknown ") << param << " '" << v->tok.spelling
                                         << "'; expected " << listWords(known);
  return emitError(v->loc, "argument '")
         << param << "' must be one of " << listWords(known) << ", got "
         << describeValue(*v);
}

/// The names of an l2 enum's cases, in order.
template <typename EnumT>
static SmallVector<StringRef> enumWords(uint64_t maxValue,
                                        StringRef (*stringify)(EnumT)) {
  SmallVector<StringRef> words;
  for (uint64_t i = 0; i <= maxValue; ++i)
    words.push_back(stringify(static_cast<EnumT>(i)));
  return words;
}

#define L2_ENUM_WORDS(Name)                                                    \
  enumWords<l2::Name>(l2::getMaxEnumValFor##Name(), &l2::stringify##Name)

static constexpr StringRef kSampleMethods[] = {"epoch_shuffle", "stream_window",
                                               "curriculum", "replay",
                                               "distributed_shard"};
static constexpr StringRef kBackwardMethods[] = {
    "autodiff",         "evolution",    "dfa",   "reinforce",
    "straight_through", "zeroth_order", "hybrid"};
static constexpr StringRef kUpdateMethods[] = {
    "sgd",           "adam", "muon",      "lion",          "schedule",
    "gradient_clip", "ema",  "per_param", "param_override"};

static StringRef familyName(Family family) {
  switch (family) {
  case Family::Sample:
    return "sample";
  case Family::Backward:
    return "backward";
  case Family::Update:
    return "update";
  }
  return "";
}

/// Builds the method attribute a call names, checked by the attribute's own
/// verifier (located at the method's name).
FailureOr<Attribute> Parser::buildMethod(const SynValue &call, Family family) {
  ArrayRef<StringRef> known = family == Family::Sample ? kSampleMethods
                              : family == Family::Backward
                                  ? ArrayRef<StringRef>(kBackwardMethods)
                                  : ArrayRef<StringRef>(kUpdateMethods);
  StringRef name = call.tok.spelling;
  if (!call.hints.empty())
    return emitError(call.hintsLoc, "an escape hatch inside 'methods for' "
                                    "attaches to a layer, not to a method");
  if (call.kind != SynValue::Call && call.kind != SynValue::Word)
    return emitError(call.loc, "expected a ")
           << familyName(family) << " method (" << listWords(known)
           << "), found " << describeValue(call);
  if (!llvm::is_contained(known, name))
    return emitError(call.loc, "unknown ")
           << familyName(family) << " method '" << name << "'; expected "
           << listWords(known);
  Location at = call.loc;
  auto emit = [&] { return emitError(at); };
  SmallVector<const SynValue *> a;
  auto bind = [&](ArrayRef<StringRef> params) {
    return bindArgs(call, params, a);
  };
  auto i64 = [&](unsigned i, StringRef p,
                 std::optional<int64_t> dflt = {}) -> FailureOr<int64_t> {
    if (!a[i] && dflt)
      return *dflt;
    if (need(call, a[i], p))
      return failure();
    return intArg(a[i], p);
  };
  auto f64 = [&](unsigned i, StringRef p,
                 std::optional<double> dflt = {}) -> FailureOr<APFloat> {
    if (!a[i] && dflt)
      return APFloat(*dflt);
    if (need(call, a[i], p))
      return failure();
    FailureOr<double> v = realArg(a[i], p);
    if (failed(v))
      return failure();
    return APFloat(*v);
  };
  auto method = [&](unsigned i, StringRef p, Family f) -> FailureOr<Attribute> {
    if (need(call, a[i], p))
      return failure();
    return buildMethod(*a[i], f);
  };
  auto word = [&](unsigned i, StringRef p,
                  ArrayRef<StringRef> words) -> FailureOr<StringRef> {
    if (need(call, a[i], p))
      return failure();
    return wordArg(a[i], p, words);
  };
  Attribute result;
#define TRY(var, expr)                                                         \
  auto var##OrFailure = (expr);                                                \
  if (failed(var##OrFailure))                                                  \
    return failure();                                                          \
  auto var = *var##OrFailure;

  if (name == "epoch_shuffle") {
    if (bind({"batch", "drop_last"}))
      return failure();
    TRY(batch, i64(0, "batch"));
    bool dropLast = false;
    if (a[1]) {
      TRY(b, boolArg(a[1], "drop_last"));
      dropLast = b;
    }
    result = l2::EpochShuffleAttr::getChecked(emit, ctx, batch, dropLast);
  } else if (name == "stream_window") {
    if (bind({"window", "stride", "batch"}))
      return failure();
    TRY(window, i64(0, "window"));
    TRY(stride, i64(1, "stride"));
    int64_t windows = 0;
    if (a[2]) {
      TRY(n, i64(2, "batch"));
      windows = n;
    }
    result = l2::StreamWindowAttr::getChecked(emit, ctx, window, stride, windows);
  } else if (name == "curriculum") {
    if (bind({"phases", "batch"}))
      return failure();
    if (need(call, a[0], "phases"))
      return failure();
    if (a[0]->kind != SynValue::List)
      return emitError(a[0]->loc, "argument 'phases' must be a list of "
                                  "{ filter: <pred>, duration: n_steps }");
    SmallVector<Attribute> phases;
    for (const SynValue &item : a[0]->items) {
      if (item.kind != SynValue::Record)
        return emitError(item.loc, "a curriculum phase is a record "
                                   "{ filter: <pred>, duration: n_steps }, "
                                   "got ")
               << describeValue(item);
      SmallVector<const SynValue *> f;
      SynValue phase = item;
      phase.tok = call.tok; // errors name the curriculum
      if (bindArgs(phase, {"filter", "duration"}, f) ||
          need(phase, f[0], "filter") || need(phase, f[1], "duration"))
        return failure();
      if (f[0]->kind != SynValue::Str && f[0]->kind != SynValue::Word)
        return emitError(f[0]->loc, "a phase's filter is a predicate "
                                    "written as a string or a name, got ")
               << describeValue(*f[0]);
      std::string filter = f[0]->kind == SynValue::Str
                               ? f[0]->tok.getStringValue()
                               : f[0]->tok.spelling.str();
      TRY(duration, intArg(f[1], "duration"));
      at = item.loc;
      Attribute p =
          l2::PhaseAttr::getChecked(emit, ctx, StringRef(filter), duration);
      if (!p)
        return failure();
      phases.push_back(p);
    }
    at = call.loc;
    TRY(batch, i64(1, "batch"));
    result = l2::CurriculumAttr::getChecked(emit, ctx, batch,
                                            builder.getArrayAttr(phases));
  } else if (name == "replay") {
    if (bind({"buffer", "priority", "batch"}))
      return failure();
    TRY(buffer, i64(0, "buffer"));
    TRY(priority, word(1, "priority", L2_ENUM_WORDS(ReplayPriority)));
    TRY(batch, i64(2, "batch"));
    result = l2::ReplayAttr::getChecked(
        emit, ctx, buffer, *l2::symbolizeReplayPriority(priority), batch);
  } else if (name == "distributed_shard") {
    if (bind({"shards", "method"}))
      return failure();
    TRY(shards, i64(0, "shards"));
    TRY(inner, method(1, "method", Family::Sample));
    result = l2::DistributedShardAttr::getChecked(emit, ctx, shards, inner);
  } else if (name == "autodiff") {
    if (bind({"mode", "checkpoint"}))
      return failure();
    TRY(mode, word(0, "mode", L2_ENUM_WORDS(AutodiffMode)));
    ArrayAttr checkpoint;
    if (a[1]) {
      if (a[1]->kind != SynValue::List)
        return emitError(a[1]->loc, "argument 'checkpoint' must be a list "
                                    "of layer names, got ")
               << describeValue(*a[1]);
      SmallVector<Attribute> names;
      for (const SynValue &item : a[1]->items) {
        if (item.kind == SynValue::Word)
          names.push_back(builder.getStringAttr(item.tok.spelling));
        else if (item.kind == SynValue::Str)
          names.push_back(builder.getStringAttr(item.tok.getStringValue()));
        if (item.kind == SynValue::Word || item.kind == SynValue::Str)
          checkpointUses.push_back(
              {cast<StringAttr>(names.back()).str(), item.loc});
        else
          return emitError(item.loc, "a checkpoint is a layer name (fc1, "
                                     "norm2, ...), got ")
                 << describeValue(item);
      }
      checkpoint = builder.getArrayAttr(names);
    }
    result = l2::AutodiffAttr::getChecked(
        emit, ctx, *l2::symbolizeAutodiffMode(mode), checkpoint);
  } else if (name == "evolution") {
    if (bind({"pop", "sigma", "selection"}))
      return failure();
    TRY(pop, i64(0, "pop"));
    TRY(sigma, f64(1, "sigma"));
    TRY(selection, word(2, "selection", L2_ENUM_WORDS(Selection)));
    result = l2::EvolutionAttr::getChecked(emit, ctx, pop, sigma,
                                           *l2::symbolizeSelection(selection));
  } else if (name == "dfa") {
    if (bind({"feedback_dim"}))
      return failure();
    TRY(dim, i64(0, "feedback_dim"));
    result = l2::DfaAttr::getChecked(emit, ctx, dim);
  } else if (name == "reinforce") {
    if (bind({"baseline"}))
      return failure();
    TRY(baseline, word(0, "baseline", L2_ENUM_WORDS(Baseline)));
    result = l2::ReinforceAttr::getChecked(emit, ctx,
                                           *l2::symbolizeBaseline(baseline));
  } else if (name == "straight_through") {
    if (bind({"estimator"}))
      return failure();
    TRY(estimator, word(0, "estimator", L2_ENUM_WORDS(Estimator)));
    result = l2::StraightThroughAttr::getChecked(
        emit, ctx, *l2::symbolizeEstimator(estimator));
  } else if (name == "zeroth_order") {
    if (bind({"samples", "sigma"}))
      return failure();
    TRY(samples, i64(0, "samples"));
    TRY(sigma, f64(1, "sigma"));
    result = l2::ZerothOrderAttr::getChecked(emit, ctx, samples, sigma);
  } else if (name == "hybrid") {
    if (bind({"primary", "aux", "blend"}))
      return failure();
    TRY(primary, method(0, "primary", Family::Backward));
    TRY(aux, method(1, "aux", Family::Backward));
    TRY(blend, word(2, "blend", L2_ENUM_WORDS(DecayKind)));
    result = l2::HybridAttr::getChecked(emit, ctx, primary, aux,
                                        *l2::symbolizeDecayKind(blend));
  } else if (name == "sgd") {
    if (bind({"lr"}))
      return failure();
    TRY(lr, f64(0, "lr"));
    result = l2::SgdAttr::getChecked(emit, ctx, lr);
  } else if (name == "adam") {
    if (bind({"lr", "beta1", "beta2", "eps"}))
      return failure();
    TRY(lr, f64(0, "lr"));
    TRY(beta1, f64(1, "beta1", 0.9));
    TRY(beta2, f64(2, "beta2", 0.999));
    TRY(eps, f64(3, "eps", 1e-8));
    result = l2::AdamAttr::getChecked(emit, ctx, lr, beta1, beta2, eps);
  } else if (name == "muon") {
    if (bind({"lr", "ns_steps"}))
      return failure();
    TRY(lr, f64(0, "lr"));
    TRY(steps, i64(1, "ns_steps", 5));
    result = l2::MuonAttr::getChecked(emit, ctx, lr, steps);
  } else if (name == "lion") {
    if (bind({"lr", "beta1", "beta2"}))
      return failure();
    TRY(lr, f64(0, "lr"));
    TRY(beta1, f64(1, "beta1", 0.9));
    TRY(beta2, f64(2, "beta2", 0.99));
    result = l2::LionAttr::getChecked(emit, ctx, lr, beta1, beta2);
  } else if (name == "schedule") {
    if (bind({"warmup", "decay", "inner"}))
      return failure();
    TRY(warmup, i64(0, "warmup"));
    TRY(decay, word(1, "decay", L2_ENUM_WORDS(DecayKind)));
    TRY(inner, method(2, "inner", Family::Update));
    result = l2::ScheduleAttr::getChecked(
        emit, ctx, warmup, *l2::symbolizeDecayKind(decay), inner);
  } else if (name == "gradient_clip") {
    if (bind({"max_norm", "inner"}))
      return failure();
    TRY(maxNorm, f64(0, "max_norm"));
    TRY(inner, method(1, "inner", Family::Update));
    result = l2::GradientClipAttr::getChecked(emit, ctx, maxNorm, inner);
  } else if (name == "ema") {
    if (bind({"decay", "inner"}))
      return failure();
    TRY(decay, f64(0, "decay"));
    TRY(inner, method(1, "inner", Family::Update));
    result = l2::EmaAttr::getChecked(emit, ctx, decay, inner);
  } else if (name == "per_param") {
    if (bind({"others", "matrix", "overrides"}))
      return failure();
    TRY(others, method(0, "others", Family::Update));
    Attribute matrix;
    if (a[1]) {
      TRY(m, buildMethod(*a[1], Family::Update));
      matrix = m;
    }
    ArrayAttr overrides;
    if (a[2]) {
      if (a[2]->kind != SynValue::List)
        return emitError(a[2]->loc, "argument 'overrides' must be a list of "
                                    "param_override(...), got ")
               << describeValue(*a[2]);
      SmallVector<Attribute> list;
      for (const SynValue &item : a[2]->items) {
        if (item.kind != SynValue::Call ||
            item.tok.spelling != "param_override")
          return emitError(item.loc, "an override is param_override(param: "
                                     "\"<layer>.<slot>\", shape: [...], "
                                     "update: <update>), got ")
                 << describeValue(item);
        TRY(o, buildMethod(item, Family::Update));
        list.push_back(o);
      }
      overrides = builder.getArrayAttr(list);
    }
    result = l2::PerParamAttr::getChecked(emit, ctx, others, matrix, overrides);
  } else { // param_override
    if (bind({"param", "shape", "update"}))
      return failure();
    if (need(call, a[0], "param") || need(call, a[1], "shape"))
      return failure();
    if (a[0]->kind != SynValue::Str)
      return emitError(a[0]->loc, "argument 'param' must be a string "
                                  "(\"fc1.weight\"), got ")
             << describeValue(*a[0]);
    if (a[1]->kind != SynValue::List)
      return emitError(a[1]->loc, "argument 'shape' must be a list of "
                                  "dimensions, got ")
             << describeValue(*a[1]);
    SmallVector<int64_t> shape;
    for (const SynValue &item : a[1]->items) {
      TRY(d, intArg(&item, "shape"));
      shape.push_back(d);
    }
    TRY(update, method(2, "update", Family::Update));
    std::string param = a[0]->tok.getStringValue();
    overrideUses.push_back({param, call.loc});
    result = l2::ParamOverrideAttr::getChecked(
        emit, ctx, StringRef(param), ArrayRef<int64_t>(shape), update);
  }
  if (!result)
    return failure();
  return result;
}

//===--- Layers
//------------------------------------------------------------===//

static constexpr StringRef kLayers[] = {
    "linear",   "conv",       "attn",      "norm",    "act",
    "embed",    "pool",       "dropout",   "softmax", "flatten",
    "quantize", "relu",       "gelu",      "silu",    "swish",
    "residual", "sequential", "recurrent", "mixture", "diffusion_chain"};

/// Gives `op` its result type from its shape rule; a rule that does not
/// hold is reported as row L2.1 at the layer's token.
FailureOr<Value> Parser::finishLayer(Operation *op) {
  auto rule = cast<InferTypeOpInterface>(op);
  SmallVector<Type> inferred;
  if (failed(rule.inferReturnTypes(
          ctx, op->getLoc(), op->getOperands(), op->getRawDictionaryAttrs(),
          op->getPropertiesStorage(), op->getRegions(), inferred)) ||
      inferred.size() != 1)
    return failure();
  op->getResult(0).setType(inferred.front());
  return op->getResult(0);
}

FailureOr<Value> Parser::buildLayers(const std::vector<SynValue> &layers,
                                     Value x) {
  for (const SynValue &layer : layers) {
    FailureOr<Value> next = buildLayer(layer, x);
    if (failed(next))
      return failure();
    x = *next;
  }
  return x;
}

/// One element of `sequential [...]`: a layer primitive (`linear(784, 256)`,
/// a bare activation `gelu`), or a nested `sequential [...]` /
/// `residual [...]` (x + block(x), merged with l2.add).
FailureOr<Value> Parser::buildLayer(const SynValue &layer, Value x) {
  StringRef name = layer.tok.spelling;
  if ((layer.kind != SynValue::Call && layer.kind != SynValue::Word) ||
      !llvm::is_contained(kLayers, name)) {
    if (layer.kind == SynValue::Call || layer.kind == SynValue::Word)
      return emitError(layer.loc, "unknown layer '")
             << name << "'; expected " << listWords(kLayers);
    return emitError(layer.loc, "expected a layer (")
           << listWords(kLayers) << "), found " << describeValue(layer);
  }
  Location at = layer.loc;
  if (!layer.hints.empty() &&
      llvm::is_contained(
          {"recurrent", "mixture", "diffusion_chain", "sequential", "residual"},
          name))
    return emitError(layer.hintsLoc, "an escape hatch attaches to a layer "
                                     "primitive, not to '")
           << name << "'";
  if (name == "recurrent" || name == "mixture" || name == "diffusion_chain")
    return buildRegionLayer(layer, x);
  if (name == "sequential" || name == "residual") {
    // `sequential [...]` reads as a call with one list argument when written
    // `sequential([...])`; a bare `residual` inside a list has no body.
    const SynValue *body = nullptr;
    if (layer.kind == SynValue::Call && layer.args.size() == 1 &&
        layer.args[0].key.empty() && layer.args[0].value.kind == SynValue::List)
      body = &layer.args[0].value;
    if (!body)
      return emitError(layer.loc, "'")
             << name << "' takes a list of layers: " << name << " [...]";
    FailureOr<Value> y = buildLayers(body->items, x);
    if (failed(y) || name == "sequential")
      return y;
    auto add = l2::AddOp::create(builder, at, x.getType(), x, *y, StringAttr(),
                                 ArrayAttr());
    return finishLayer(add);
  }
  // `gelu` is `act(gelu)`.
  SynValue call = layer;
  if (llvm::is_contained({"relu", "gelu", "silu", "swish"}, name)) {
    if (layer.kind == SynValue::Call)
      return emitError(layer.loc, "'")
             << name << "' takes no arguments; "
             << "write " << name << " or act(" << name << ")";
    call.args.clear();
    SynArg fn{StringRef(), layer.loc, layer};
    call.args.push_back(std::move(fn));
    name = "act";
  }
  ArrayAttr hints =
      layer.hints.empty() ? ArrayAttr() : builder.getArrayAttr(layer.hints);
  // Layers with parameters are labelled for checkpoints and per-parameter
  // overrides: fc1, fc2 (linear), conv1, attn1, norm1, embed1.
  auto label = [&](StringRef prefix) {
    return builder.getStringAttr(prefix + Twine(++layerCounts[prefix]));
  };
  SmallVector<const SynValue *> a;
  auto posInt =
      [&](unsigned i, StringRef p,
          std::optional<int64_t> dflt = {}) -> FailureOr<IntegerAttr> {
    if (!a[i] && dflt)
      return builder.getI64IntegerAttr(*dflt);
    if (need(call, a[i], p))
      return failure();
    FailureOr<int64_t> v = intArg(a[i], p);
    if (failed(v))
      return failure();
    if (*v <= 0 && !(dflt && *dflt == 0))
      return emitError(a[i]->loc, "argument '")
             << p << "' of '" << name << "' must be positive, got " << *v;
    if (*v < 0)
      return emitError(a[i]->loc, "argument '")
             << p << "' of '" << name << "' must not be negative, got " << *v;
    return builder.getI64IntegerAttr(*v);
  };
  Operation *op = nullptr;
  Type t = x.getType();
  if (name == "linear") {
    if (bindArgs(call, {"in", "out"}, a))
      return failure();
    TRY(in, posInt(0, "in"));
    TRY(out, posInt(1, "out"));
    // `sequential` feeds images to a linear layer as flat rows: a
    // [N, d1, ..., dk] input whose d1*...*dk is `in` is flattened first.
    if (auto tensor = dyn_cast<RankedTensorType>(t);
        tensor && tensor.hasStaticShape() && tensor.getRank() > 2 &&
        tensor.getShape().back() != in.getInt()) {
      int64_t flat = 1;
      for (int64_t d : tensor.getShape().drop_front()) {
        if (d <= 0 || flat > in.getInt() / d) {
          flat = -1; // larger than `in` (or empty): no flatten
          break;
        }
        flat *= d;
      }
      if (flat == in.getInt()) {
        auto flatten =
            l2::FlattenOp::create(builder, at, t, x, StringAttr(), ArrayAttr());
        FailureOr<Value> f = finishLayer(flatten);
        if (failed(f))
          return failure();
        x = *f;
        t = x.getType();
      }
    }
    op = l2::LinearOp::create(builder, at, t, x, in, out, label("fc"), hints);
  } else if (name == "conv") {
    if (bindArgs(call, {"in_ch", "out_ch", "kernel", "stride", "padding"}, a))
      return failure();
    TRY(inCh, posInt(0, "in_ch"));
    TRY(outCh, posInt(1, "out_ch"));
    TRY(kernel, posInt(2, "kernel"));
    TRY(stride, posInt(3, "stride", 1));
    TRY(padding, posInt(4, "padding", 0));
    op = l2::ConvOp::create(builder, at, t, x, inCh, outCh, kernel, stride,
                            padding, label("conv"), hints);
  } else if (name == "attn") {
    if (bindArgs(call, {"heads", "dim", "causal"}, a))
      return failure();
    TRY(heads, posInt(0, "heads"));
    TRY(dim, posInt(1, "dim"));
    bool causal = false;
    if (a[2]) {
      TRY(c, boolArg(a[2], "causal"));
      causal = c;
    }
    op = l2::AttnOp::create(builder, at, t, x, heads, dim,
                            causal ? builder.getUnitAttr() : UnitAttr(),
                            label("attn"), hints);
  } else if (name == "norm") {
    if (bindArgs(call, {"kind"}, a) || need(call, a[0], "kind"))
      return failure();
    // norm(layer), norm(rms), norm(group(n))
    const SynValue *kind = a[0];
    IntegerAttr groups;
    StringRef word = kind->tok.spelling;
    if (kind->kind == SynValue::Call && word == "group") {
      SynValue groupCall = *kind;
      SmallVector<const SynValue *> g;
      if (bindArgs(groupCall, {"n"}, g) || need(groupCall, g[0], "n"))
        return failure();
      FailureOr<int64_t> n = intArg(g[0], "n");
      if (failed(n))
        return failure();
      if (*n <= 0)
        return emitError(g[0]->loc, "group(n) needs a positive n, got ") << *n;
      groups = builder.getI64IntegerAttr(*n);
    } else {
      SmallVector<StringRef> kinds{"layer", "rms"};
      if (kind->kind == SynValue::Word && word == "group")
        return emitError(kind->loc, "group normalization needs its number "
                                    "of groups: group(n)");
      FailureOr<StringRef> w =
          wordArg(kind, "norm kind", {"layer", "group(n)", "rms"});
      if (failed(w))
        return failure();
    }
    op = l2::NormOp::create(
        builder, at, t, x,
        l2::NormKindAttr::get(ctx, *l2::symbolizeNormKind(word)), groups,
        label("norm"), hints);
  } else if (name == "act") {
    if (bindArgs(call, {"fn"}, a) || need(call, a[0], "fn"))
      return failure();
    TRY(fn, wordArg(a[0], "activation", L2_ENUM_WORDS(ActFn)));
    op = l2::ActOp::create(builder, at, t, x,
                           l2::ActFnAttr::get(ctx, *l2::symbolizeActFn(fn)),
                           StringAttr(), hints);
  } else if (name == "embed") {
    if (bindArgs(call, {"vocab", "dim", "positions"}, a))
      return failure();
    TRY(vocab, posInt(0, "vocab"));
    TRY(dim, posInt(1, "dim"));
    IntegerAttr positions;
    if (a[2]) {
      TRY(n, posInt(2, "positions"));
      positions = n;
    }
    op = l2::EmbedOp::create(builder, at, t, x, vocab, dim, positions, label("embed"),
                             hints);
  } else if (name == "pool") {
    if (bindArgs(call, {"kind", "kernel"}, a) || need(call, a[0], "kind"))
      return failure();
    TRY(kind, wordArg(a[0], "pool kind", L2_ENUM_WORDS(PoolKind)));
    TRY(kernel, posInt(1, "kernel"));
    op = l2::PoolOp::create(
        builder, at, t, x,
        l2::PoolKindAttr::get(ctx, *l2::symbolizePoolKind(kind)), kernel,
        StringAttr(), hints);
  } else if (name == "dropout") {
    if (bindArgs(call, {"p"}, a) || need(call, a[0], "p"))
      return failure();
    TRY(p, realArg(a[0], "p"));
    if (!(p >= 0 && p < 1))
      return emitError(a[0]->loc, "dropout's p must be in [0, 1), got ")
             << a[0]->tok.spelling;
    op = l2::DropoutOp::create(builder, at, t, x, builder.getF64FloatAttr(p),
                               StringAttr(), hints);
  } else if (name == "quantize") {
    if (bindArgs(call, {"bits"}, a))
      return failure();
    TRY(bits, posInt(0, "bits"));
    op = l2::QuantizeOp::create(builder, at, t, x, bits, StringAttr(), hints);
  } else { // softmax, flatten
    if (bindArgs(call, {}, a))
      return failure();
    if (name == "softmax")
      op = l2::SoftmaxOp::create(builder, at, t, x, StringAttr(), hints);
    else
      op = l2::FlattenOp::create(builder, at, t, x, StringAttr(), hints);
  }
  return finishLayer(op);
}
#undef TRY

/// Fills `region` with one block taking `input`, the DAG `body`, and an
/// l2.yield of its result (at the body's closing bracket).
FailureOr<Value> Parser::buildSubDag(Region &region, Type input,
                                     const SynValue &body) {
  Block &block = region.emplaceBlock();
  Value arg = block.addArgument(input, body.loc);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&block);
  FailureOr<Value> y = buildLayer(body, arg);
  if (failed(y))
    return failure();
  l2::YieldOp::create(builder, body.close, ValueRange{*y});
  return *y;
}

/// The infer methods with bodies:
///   recurrent(cell: <infer>, steps: n | until(<pred>, max_steps: n))
///   diffusion_chain(steps: n, noise: linear | cosine | sigmoid,
///                   denoiser: <infer>)
///   mixture(experts: [<infer>, ...], gate: <infer>, top_k: k)
/// Each <infer> is a layer or `sequential [...]`; its block takes the
/// op's input (the recurrent state, the noised sample).
FailureOr<Value> Parser::buildRegionLayer(const SynValue &layer, Value x) {
  StringRef name = layer.tok.spelling;
  Location at = layer.loc;
  SmallVector<const SynValue *> a;
  auto positive = [&](const SynValue *v, StringRef p) -> FailureOr<int64_t> {
    FailureOr<int64_t> n = intArg(v, p);
    if (succeeded(n) && *n <= 0)
      return emitError(v->loc, "argument '")
             << p << "' of '" << name << "' must be positive, got " << *n;
    return n;
  };
  if (layer.kind != SynValue::Call)
    return emitError(at, "'")
           << name << "' needs its arguments: " << name << "(...)";
  if (name == "recurrent") {
    if (bindArgs(layer, {"cell", "steps", "max_steps"}, a) ||
        need(layer, a[0], "cell") || need(layer, a[1], "steps"))
      return failure();
    IntegerAttr steps, maxSteps;
    StringAttr until;
    if (a[1]->kind == SynValue::Call && a[1]->tok.spelling == "until") {
      SmallVector<const SynValue *> u;
      if (bindArgs(*a[1], {"pred", "max_steps"}, u) ||
          need(*a[1], u[0], "pred"))
        return failure();
      if (u[0]->kind != SynValue::Str && u[0]->kind != SynValue::Word)
        return emitError(u[0]->loc, "until's predicate is a string or a "
                                    "name, got ")
               << describeValue(*u[0]);
      until = builder.getStringAttr(u[0]->kind == SynValue::Str
                                        ? u[0]->tok.getStringValue()
                                        : u[0]->tok.spelling.str());
      const SynValue *bound = u[1] ? u[1] : a[2];
      if (u[1] && a[2])
        return emitError(a[2]->loc, "max_steps is given twice");
      if (bound) {
        FailureOr<int64_t> n = positive(bound, "max_steps");
        if (failed(n))
          return failure();
        maxSteps = builder.getI64IntegerAttr(*n);
      }
    } else {
      if (a[2])
        return emitError(a[2]->loc, "max_steps bounds until(<pred>); "
                                    "steps is already a count");
      FailureOr<int64_t> n = positive(a[1], "steps");
      if (failed(n))
        return failure();
      steps = builder.getI64IntegerAttr(*n);
    }
    auto op = l2::RecurrentOp::create(builder, at, x.getType(), x, steps, until,
                                      maxSteps, StringAttr());
    if (failed(buildSubDag(op.getCell(), x.getType(), *a[0])))
      return failure();
    return op.getResult();
  }
  if (name == "diffusion_chain") {
    if (bindArgs(layer, {"steps", "noise", "denoiser"}, a) ||
        need(layer, a[0], "steps") || need(layer, a[1], "noise") ||
        need(layer, a[2], "denoiser"))
      return failure();
    FailureOr<int64_t> steps = positive(a[0], "steps");
    if (failed(steps))
      return failure();
    FailureOr<StringRef> noise =
        wordArg(a[1], "noise schedule", L2_ENUM_WORDS(NoiseSchedule));
    if (failed(noise))
      return failure();
    auto op = l2::DiffusionChainOp::create(
        builder, at, x.getType(), x, builder.getI64IntegerAttr(*steps),
        l2::NoiseScheduleAttr::get(ctx, *l2::symbolizeNoiseSchedule(*noise)),
        StringAttr());
    if (failed(buildSubDag(op.getDenoiser(), x.getType(), *a[2])))
      return failure();
    return op.getResult();
  }
  // mixture
  if (bindArgs(layer, {"experts", "gate", "top_k"}, a) ||
      need(layer, a[0], "experts") || need(layer, a[1], "gate"))
    return failure();
  if (a[0]->kind != SynValue::List || a[0]->items.empty())
    return emitError(a[0]->loc, "argument 'experts' must be a non-empty list "
                                "of infer DAGs, got ")
           << describeValue(*a[0]);
  IntegerAttr topK;
  if (a[2]) {
    FailureOr<int64_t> k = positive(a[2], "top_k");
    if (failed(k))
      return failure();
    topK = builder.getI64IntegerAttr(*k);
  }
  auto op = l2::MixtureOp::create(builder, at, x.getType(), x, topK,
                                  StringAttr(), a[0]->items.size());
  Type result;
  for (auto [i, expert] : llvm::enumerate(a[0]->items)) {
    FailureOr<Value> y = buildSubDag(op.getExperts()[i], x.getType(), expert);
    if (failed(y))
      return failure();
    if (!result)
      result = y->getType();
  }
  op->getResult(0).setType(result);
  if (failed(buildSubDag(op.getGate(), x.getType(), *a[1])))
    return failure();
  return op.getResult();
}

/// How one example of an L3 domain is laid out in an infer input (as the
/// l2.methods verifier reads it, row L2.5): tensors as they are, scalar<dt>
/// as 0-d, sequence<d, n> as n examples of d, dist<n> as n f32.
static std::optional<std::pair<SmallVector<int64_t>, Type>>
exampleShape(Type domain) {
  if (auto tensor = dyn_cast<RankedTensorType>(domain))
    return std::make_pair(SmallVector<int64_t>(tensor.getShape()),
                          tensor.getElementType());
  if (auto scalar = dyn_cast<l3::ScalarType>(domain))
    return std::make_pair(SmallVector<int64_t>(), scalar.getDtype());
  if (auto seq = dyn_cast<l3::SequenceType>(domain)) {
    auto inner = exampleShape(seq.getElementDomain());
    if (inner)
      inner->first.insert(inner->first.begin(), seq.getMaxLen());
    return inner;
  }
  if (auto dist = dyn_cast<l3::DistType>(domain))
    return std::make_pair(SmallVector<int64_t>{dist.getNumClasses()},
                          Type(Float32Type::get(domain.getContext())));
  return std::nullopt;
}

/// methods ::= 'methods' 'for' ident '{' { 'sample' ':' method
///                                       | 'infer' ':' layer
///                                       | 'backward' ':' method
///                                       | 'update' ':' method
///                                       | 'train' ':' loop } '}'
/// loop ::= 'loop' '(' 'epochs' ':' n [',' 'evaluate' ':' split]
///                     [',' 'checkpoint_every' ':' n] ')'
ParseResult Parser::parseMethods() {
  Location methodsLoc = loc();
  consume(); // 'methods'
  if (!tok.isKeyword("for"))
    return expected("'for' after 'methods' (methods for <model> { ... })");
  consume();
  Location modelLoc = loc();
  StringRef modelName;
  if (parseIdent(modelName, "the model's name after 'methods for'"))
    return failure();
  auto module = cast<ModuleOp>(builder.getInsertionBlock()->getParentOp());
  Operation *named = SymbolTable::lookupSymbolIn(module, modelName);
  auto model = dyn_cast_or_null<l3::ModelOp>(named);
  if (named && !model) {
    InFlightDiagnostic diag = emitError(modelLoc, "'")
                              << modelName << "' is not a model; 'methods "
                              << "for' names the model it trains";
    diag.attachNote(named->getLoc())
        << "'" << modelName << "' is declared here";
    return diag;
  }
  if (!model) {
    SmallVector<StringRef> models;
    for (auto m : module.getOps<l3::ModelOp>())
      models.push_back(m.getSymName());
    InFlightDiagnostic diag = emitError(modelLoc, "unknown model '")
                              << modelName << "' in 'methods for'";
    if (models.empty())
      diag << "; no model is declared before it";
    else
      diag << "; the models declared before it are " << listWords(models);
    return diag;
  }
  Location open = loc();
  if (expect(Token::LBrace, "to open the methods block"))
    return failure();
  std::optional<SynValue> sample, infer, backward, update, train;
  Location inferLoc = open;
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(/*goalIsEntry=*/false))
      return unclosedBody("methods", modelName, open);
    Location keyLoc = loc();
    StringRef key;
    if (parseIdent(key, "'sample', 'infer', 'backward', 'update', 'train' or '}'"))
      return failure();
    std::optional<SynValue> *slot =
        llvm::StringSwitch<std::optional<SynValue> *>(key)
            .Case("sample", &sample)
            .Case("infer", &infer)
            .Case("backward", &backward)
            .Case("update", &update)
            .Case("train", &train)
            .Default(nullptr);
    if (!slot)
      return emitError(keyLoc, "unknown methods entry '")
             << key << "'; expected sample, infer, backward, update or train";
    if (*slot)
      return emitError(keyLoc, "duplicate '")
             << key << "' in methods for '" << modelName << "'";
    if (key == "infer")
      inferLoc = keyLoc;
    if (expect(Token::Colon, ("after '" + key + "'").str()))
      return failure();
    slot->emplace(loc());
    if (parseValue(**slot))
      return failure();
  }
  Location close = loc();
  consume(); // '}'
  for (auto [entry, what] :
       {std::make_pair(&sample, "sample"), std::make_pair(&infer, "infer"),
        std::make_pair(&backward, "backward"),
        std::make_pair(&update, "update")})
    if (!*entry)
      return emitError(close, "methods for '")
             << modelName << "' has no '" << what << ":' entry";

  checkpointUses.clear();
  overrideUses.clear();
  FailureOr<Attribute> sampleAttr = buildMethod(*sample, Family::Sample);
  if (failed(sampleAttr))
    return failure();
  FailureOr<Attribute> backwardAttr = buildMethod(*backward, Family::Backward);
  if (failed(backwardAttr))
    return failure();
  FailureOr<Attribute> updateAttr = buildMethod(*update, Family::Update);
  if (failed(updateAttr))
    return failure();
  // `train: loop(epochs: 3, evaluate: t10k, checkpoint_every: 500)`, optional
  // (docs/training.md); `evaluate` is a split name (a word or a string).
  l2::TrainLoopAttr trainAttr;
  if (train) {
    const SynValue &call = *train;
    if (call.kind != SynValue::Call || call.tok.spelling != "loop")
      return emitError(call.loc, "'train' takes loop(epochs: n, evaluate: "
                                 "<split>, checkpoint_every: n, steps: n), got ")
             << describeValue(call);
    SmallVector<const SynValue *> a;
    if (bindArgs(call, {"epochs", "evaluate", "checkpoint_every", "steps"}, a) ||
        need(call, a[0], "epochs"))
      return failure();
    FailureOr<int64_t> epochs = intArg(a[0], "epochs");
    if (failed(epochs))
      return failure();
    if (*epochs < 1)
      return emitError(a[0]->loc, "argument 'epochs' must be positive, got ")
             << *epochs;
    std::string split;
    if (a[1]) {
      if (a[1]->kind != SynValue::Word && a[1]->kind != SynValue::Str)
        return emitError(a[1]->loc, "argument 'evaluate' must name a split "
                                    "(t10k, none, ...), got ")
               << describeValue(*a[1]);
      split = a[1]->kind == SynValue::Str ? a[1]->tok.getStringValue()
                                          : a[1]->tok.spelling.str();
    }
    int64_t every = 0;
    if (a[2]) {
      FailureOr<int64_t> e = intArg(a[2], "checkpoint_every");
      if (failed(e))
        return failure();
      every = *e;
    }
    int64_t steps = 0;
    if (a[3]) {
      FailureOr<int64_t> n = intArg(a[3], "steps");
      if (failed(n))
        return failure();
      if (*n < 1)
        return emitError(a[3]->loc, "argument 'steps' must be positive, got ") << *n;
      steps = *n;
    }
    auto emit = [&] { return emitError(call.loc); };
    trainAttr = l2::TrainLoopAttr::getChecked(
        llvm::function_ref<InFlightDiagnostic()>(emit), ctx, *epochs,
        StringRef(split), every, steps);
    if (!trainAttr)
      return failure();
  }

  // The infer input: one batch of the model's `in` field.
  Type domain;
  if (TypeAttr inline_ = model.getInDomainAttr())
    domain = inline_.getValue();
  SymbolRefAttr inRef = model.getInRef();
  if (!domain) {
    auto data = dyn_cast_or_null<l3::DataOp>(
        SymbolTable::lookupSymbolIn(module, inRef.getRootReference()));
    Operation *field = nullptr;
    if (data && inRef.getNestedReferences().size() == 1)
      field = SymbolTable::lookupSymbolIn(data, inRef.getLeafReference());
    if (auto f = dyn_cast_or_null<l3::FieldOp>(field))
      domain = f.getDomain();
  }
  if (!domain) {
    InFlightDiagnostic diag =
        emitError(inferLoc, "cannot type the infer input: model '")
        << modelName << "' reads " << inRef
        << ", which is not a data field declared before it";
    diag.attachNote(model.getLoc()) << "the model is declared here";
    return diag;
  }
  auto example = exampleShape(domain);
  if (!example) {
    InFlightDiagnostic diag = emitError(inferLoc, "cannot type the infer "
                                                  "input: model '")
                              << modelName << "' reads " << inRef
                              << " of domain " << domain
                              << ", which has no tensor layout";
    diag.attachNote(model.getLoc()) << "the model is declared here";
    return diag;
  }
  int64_t batch = l2::sampleBatch(*sampleAttr);
  SmallVector<int64_t> shape{batch};
  shape.append(example->first);
  auto inputType = RankedTensorType::get(shape, example->second);

  std::string symName = (inRef.getRootReference().getValue() + "_method").str();
  for (unsigned k = 2; SymbolTable::lookupSymbolIn(module, symName); ++k)
    symName =
        (inRef.getRootReference().getValue() + "_method" + Twine(k)).str();
  auto methods =
      l2::MethodsOp::create(builder, methodsLoc, builder.getStringAttr(symName),
                            FlatSymbolRefAttr::get(ctx, modelName), *sampleAttr,
                            *backwardAttr, *updateAttr, trainAttr);
  methodsUses.try_emplace(methodsLoc,
                          MethodsUse{sample->loc, backward->loc, update->loc,
                                     checkpointUses, overrideUses});
  Block &body = methods.getInfer().emplaceBlock();
  Value x = body.addArgument(inputType, infer->loc);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body);
  layerCounts.clear();
  FailureOr<Value> y = buildLayer(*infer, x);
  if (failed(y))
    return failure();
  l2::YieldOp::create(builder, infer->close, ValueRange{*y});
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
      if (auto h = dyn_cast<l3::HintAttr>(hatch.hint)) {
        std::string written =
            ("#[" + h.getLayer() + "::" + h.getDirective()).str();
        if (!h.getArgs().empty())
          written += ("(" + h.getArgs() + ")").str();
        written += "]";
        if (!target && StringRef(message).contains(written))
          target = hatch.loc;
      }
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
