//===- ParserL1.cpp - The .syn L1 placement forms -------------------------===//
//
// system, the data binding `@ node, path: "..."`, actor, stage,
// tensor_graph, pipeline and schedule, built straight into the l1 dialect.
// The spec leaves bodies abbreviated and types implicit; here arguments are
// typed with the domain syntax and every `let` gets its result type from its
// operands by the shape rules the l1 verifiers check (synpl/Analysis/Shapes.h),
// so a shape error is reported at the `let` that wrote it. Names resolve
// while parsing: nodes against the system declared above, values against the
// enclosing scopes, state and window fields against the actor; references
// to forms that may come later (forward targets, readers, pipeline elements)
// are left to the l1 verifiers (L1.2), located at the statement.
//
// Grammar: docs/syn.md.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"

#include "synpl/Analysis/Shapes.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"
#include "synpl/Support/Property.h"
#include "synpl/Support/Units.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <cstdlib>

using namespace mlir;
using namespace synpl;
using namespace synpl::syn;
namespace sh = synpl::shapes;

/// `a, b or c`.
static std::string orList(ArrayRef<StringRef> words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i)
      out += i + 1 == words.size() ? " or " : ", ";
    out += words[i].str();
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Shared pieces: nodes, types, reference lists
//===----------------------------------------------------------------------===//

ParseResult Parser::checkNode(StringRef name, Location at) {
  if (!systemOp)
    return emitError(at, "node '")
           << name << "' is named before any system is declared; declare "
           << "'system <name> { ... }' first";
  auto system = cast<l1::SystemOp>(systemOp);
  if (system.lookupNode(name))
    return success();
  SmallVector<StringRef> known;
  for (auto node : system.getBody().front().getOps<l1::NodeOp>())
    known.push_back(node.getSymName());
  InFlightDiagnostic d = emitError(at, "unknown node '")
                         << name << "'; system '" << system.getSymName()
                         << "' has " << orList(known);
  d.attachNote(systemLoc) << "the system is declared here";
  return d;
}

ParseResult Parser::parseOnNode(FlatSymbolRefAttr &node, StringRef what) {
  if (!tok.isKeyword("on"))
    return expected("'on <node>' after the " + what + "'s name");
  consume();
  Location at = loc();
  StringRef name;
  if (parseIdent(name, "a node name after 'on'") || checkNode(name, at))
    return failure();
  node = FlatSymbolRefAttr::get(ctx, name);
  return success();
}

ParseResult Parser::parsePlacedHead(StringRef keyword, StringRef what,
                                    StringRef &name, Location &nameLoc,
                                    FlatSymbolRefAttr &node, Location &open) {
  consume(); // the keyword
  nameLoc = loc();
  if (parseIdent(name, "a name after '" + keyword + "'") ||
      parseOnNode(node, what))
    return failure();
  open = loc();
  return expect(Token::LBrace, "to open the " + what + "'s body");
}

ParseResult Parser::parseFnName(StringRef fn, StringRef what) {
  consume(); // 'fn'
  if (!tok.isKeyword(fn))
    return expected("'" + fn + "' (a " + what + "'s function is fn " + fn +
                    ")");
  consume();
  return success();
}

ParseResult Parser::beginFunctionBody(Block &entry, BodyKind kind,
                                      ArrayRef<Attribute> reads, bool buffers) {
  scopes.clear();
  scopes.emplace_back();
  bodyKind = kind;
  currentReads.clear();
  for (Attribute r : reads)
    currentReads.push_back(cast<SymbolRefAttr>(r));
  return parseTypedArgs(entry, buffers);
}

ParseResult Parser::parseTensorType(RankedTensorType &type) {
  Location at = loc();
  Type domain;
  if (parseDomain(domain))
    return failure();
  if (auto scalar = dyn_cast<l3::ScalarType>(domain))
    domain = RankedTensorType::get({}, scalar.getDtype());
  type = dyn_cast<RankedTensorType>(domain);
  if (!type)
    return emitError(at, "L1 values are tensors: write tensor(dtype, [dims]) "
                         "or scalar(dtype), got ")
           << domain;
  if (!type.getElementType().isIntOrFloat())
    return emitError(at, "tensor elements are integers or floats, got ")
           << type.getElementType();
  return success();
}

/// valtype ::= 'buf' '<' node ',' tensor '>' | tensor | scalar
ParseResult Parser::parseValueType(Type &type, bool buffers) {
  if (!tok.isKeyword("buf")) {
    if (buffers)
      return expected("a buffer type buf<node, tensor(...)> (stages receive "
                      "buffers)");
    RankedTensorType t;
    if (parseTensorType(t))
      return failure();
    type = t;
    return success();
  }
  if (!buffers)
    return error("buffers live in stages; tensor graphs and handlers take "
                 "tensors (tensor(dtype, [dims]))");
  consume();
  if (expect(Token::Less, "after 'buf'"))
    return failure();
  Location nodeAt = loc();
  StringRef node;
  RankedTensorType tensor;
  if (parseIdent(node, "a node name in buf<...>") || checkNode(node, nodeAt) ||
      expect(Token::Comma, "after the buffer's node") ||
      parseTensorType(tensor) || expect(Token::Greater, "to close buf<...>"))
    return failure();
  type = l1::BufType::get(ctx, FlatSymbolRefAttr::get(ctx, node), tensor);
  return success();
}

/// args ::= '(' [ ident ':' valtype { ',' ident ':' valtype } ] ')'
ParseResult Parser::parseTypedArgs(Block &block, bool buffers) {
  if (expect(Token::LParen, "to open the argument list"))
    return failure();
  llvm::StringSet<> seen;
  if (!tok.is(Token::RParen)) {
    do {
      Location at = loc();
      StringRef name;
      Type type;
      if (parseIdent(name, "an argument name") ||
          expect(Token::Colon, "after the argument name (arguments are typed: "
                               "x: tensor(f32, [4]))") ||
          parseValueType(type, buffers))
        return failure();
      if (!seen.insert(name).second)
        return emitError(at, "duplicate argument '") << name << "'";
      bind(name, block.addArgument(type, at));
    } while (consumeIf(Token::Comma));
  }
  return expect(Token::RParen, "to close the argument list");
}

/// refs ::= ref { ',' ref } | '[' [ ref { ',' ref } ] ']'
ParseResult Parser::parseRefList(SmallVectorImpl<Attribute> &refs, bool flat,
                                 bool bracketed) {
  bool open = bracketed || tok.is(Token::LSquare);
  if (open && expect(Token::LSquare, "to open the list"))
    return failure();
  if (open && consumeIf(Token::RSquare))
    return success();
  do {
    if (flat) {
      StringRef name;
      if (parseIdent(name, "a name"))
        return failure();
      refs.push_back(FlatSymbolRefAttr::get(ctx, name));
      continue;
    }
    SymbolRefAttr ref;
    Location at = loc();
    if (parseRef(ref, at))
      return failure();
    refs.push_back(ref);
  } while (consumeIf(Token::Comma));
  if (open)
    return expect(Token::RSquare, "to close the list");
  return success();
}

//===----------------------------------------------------------------------===//
// system
//===----------------------------------------------------------------------===//

/// system ::= 'system' ident '{' { node | edges } '}'
ParseResult Parser::parseSystem() {
  Location keywordLoc = loc();
  StringRef name;
  Location nameLoc = loc(), open = loc();
  if (parseDeclarationHead("system", name, nameLoc, open))
    return failure();
  if (systemOp) {
    InFlightDiagnostic d = emitError(keywordLoc, "a program has one system");
    d.attachNote(systemLoc) << "the first one is here";
    return d;
  }
  auto system = l1::SystemOp::create(builder, nameLoc, builder.getStringAttr(name));
  Block &body = system.getBody().emplaceBlock();
  systemOp = system;
  systemLoc = nameLoc;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body);
  llvm::StringMap<Location> nodeLocs;
  SmallVector<std::pair<StringRef, Location>> ends;
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(/*goalIsEntry=*/false))
      return unclosedBody("system", name, open);
    if (tok.isKeyword("node")) {
      if (parseNode(nodeLocs))
        return failure();
    } else if (tok.isKeyword("edges")) {
      if (parseEdges(ends))
        return failure();
    } else {
      return expected("'node', 'edges' or '}' in system '" + name + "'");
    }
  }
  consume(); // '}'
  // Edges may name nodes declared after them; check once all are known.
  for (auto [end, at] : ends)
    if (checkNode(end, at))
      return failure();
  return success();
}

/// node ::= 'node' ident '{' 'kind' ':' kind { [','] key ':' value } '}'
ParseResult Parser::parseNode(llvm::StringMap<Location> &nodeLocs) {
  consume(); // 'node'
  Location nameLoc = loc();
  StringRef name;
  if (parseIdent(name, "a node name after 'node'"))
    return failure();
  if (auto [it, inserted] = nodeLocs.try_emplace(name, nameLoc); !inserted) {
    InFlightDiagnostic d = emitError(nameLoc, "duplicate node '") << name << "'";
    d.attachNote(it->second) << "the first one is here";
    return d;
  }
  Location open = loc();
  if (expect(Token::LBrace, "to open the node's properties"))
    return failure();
  std::optional<l1::NodeKind> kind;
  NamedAttrList props;
  llvm::StringSet<> seen;
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false) || tok.isKeyword("node") ||
        tok.isKeyword("edges")) {
      InFlightDiagnostic d = expected("'}' to close node '" + name + "'");
      d.attachNote(open) << "the node's properties open here";
      return d;
    }
    Location keyLoc = loc();
    StringRef key;
    if (parseIdent(key, "a node property (kind, capacity, isa, vram, cores, "
                        "sm or arch)"))
      return failure();
    static constexpr StringRef kKeys[] = {"kind",  "capacity", "isa", "vram",
                                          "cores", "sm",       "arch"};
    if (!llvm::is_contained(kKeys, key))
      return emitError(keyLoc, "unknown node property '")
             << key << "'; expected " << orList(kKeys);
    if (!seen.insert(key).second)
      return emitError(keyLoc, "duplicate node property '") << key << "'";
    if (expect(Token::Colon, "after the node property"))
      return failure();
    Location valueLoc = loc();
    if (key == "kind") {
      StringRef word;
      if (parseIdent(word, "a node kind (storage, memory or compute)"))
        return failure();
      kind = l1::symbolizeNodeKind(word);
      if (!kind)
        return emitError(valueLoc, "unknown node kind '")
               << word << "'; expected storage, memory or compute";
    } else if (key == "capacity" || key == "vram") {
      if (!tok.is(Token::Suffixed) && !tok.is(Token::Integer))
        return expected("a byte size for '" + key + "' (e.g. 32GB)");
      if (!parseByteSize(tok.spelling))
        return error("'" + key + "' is a byte size like 32GB or 24GiB, got '" +
                     tok.spelling + "'");
      props.append(key, builder.getStringAttr(tok.spelling));
      consume();
    } else if (key == "isa" || key == "arch") {
      if (tok.is(Token::String)) {
        props.append(key, builder.getStringAttr(tok.getStringValue()));
        consume();
      } else {
        StringRef isa;
        if (parseIdent(isa, key == "isa" ? "an isa (x86_64, cuda, ...)"
                                         : "a GPU architecture (sm_80, sm_90, ...)"))
          return failure();
        props.append(key, builder.getStringAttr(isa));
      }
    } else { // cores, sm
      int64_t count;
      if (parsePositiveInt(count, "'" + key + "' (a count)"))
        return failure();
      props.append(key, builder.getI64IntegerAttr(count));
    }
    consumeIf(Token::Comma);
  }
  consume(); // '}'
  if (!kind)
    return emitError(nameLoc, "node '")
           << name << "' has no 'kind:' (storage, memory or compute)";
  props.append("sym_name", builder.getStringAttr(name));
  props.append("kind", l1::NodeKindAttr::get(ctx, *kind));
  l1::NodeOp::create(builder, nameLoc, TypeRange{}, ValueRange{},
                     props.getAttrs());
  return success();
}

/// edges ::= 'edges' '{' { ident ('->' | '<->') ident ':' 'bandwidth' rate } '}'
ParseResult Parser::parseEdges(
    SmallVectorImpl<std::pair<StringRef, Location>> &ends) {
  consume(); // 'edges'
  Location open = loc();
  if (expect(Token::LBrace, "to open the edge list"))
    return failure();
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false) ||
        tok.isKeyword("node") || tok.isKeyword("edges")) {
      InFlightDiagnostic d = expected("'}' to close the edge list");
      d.attachNote(open) << "the edge list opens here";
      return d;
    }
    Location fromLoc = loc();
    StringRef from, to;
    if (parseIdent(from, "an edge 'a -> b : bandwidth 2GB/s' or '}'"))
      return failure();
    bool both = tok.is(Token::BiArrow);
    if (!both && !tok.is(Token::Arrow))
      return expected("'->' or '<->' after the edge's first node");
    consume();
    Location toLoc = loc();
    if (parseIdent(to, "the edge's second node") ||
        expect(Token::Colon, "after the edge's nodes"))
      return failure();
    if (!tok.isKeyword("bandwidth"))
      return expected("'bandwidth' after ':'");
    consume();
    if (!tok.is(Token::Suffixed))
      return expected("a rate like 2GB/s");
    if (!parseBandwidth(tok.spelling))
      return error("bandwidth is a rate like 2GB/s or 500MB/s, got '" +
                   tok.spelling + "'");
    StringRef rate = tok.spelling;
    consume();
    ends.push_back({from, fromLoc});
    ends.push_back({to, toLoc});
    l1::EdgeOp::create(builder, fromLoc, FlatSymbolRefAttr::get(ctx, from),
                       FlatSymbolRefAttr::get(ctx, to),
                       both ? builder.getUnitAttr() : UnitAttr(),
                       builder.getStringAttr(rate));
    consumeIf(Token::Comma);
  }
  consume(); // '}'
  return success();
}

//===----------------------------------------------------------------------===//
// Data binding and L1 programs
//===----------------------------------------------------------------------===//

/// binding ::= '@' node ',' 'path' ':' string
///             [ ',' 'format' ':' ( 'idx' | 'raw' | 'text' ) ]
/// On an l3.field: `l1.at = @node`, `l1.path = "..."` (and `l1.format`).
ParseResult Parser::parseDataBinding(Operation *field) {
  consume(); // '@'
  Location nodeLoc = loc();
  StringRef node;
  if (parseIdent(node, "a storage node after '@'"))
    return failure();
  // Without a system in this file (the system is read separately, as
  // `synplc --system` does), the node is checked when the program is placed.
  if (systemOp && checkNode(node, nodeLoc))
    return failure();
  if (expect(Token::Comma, "after the storage node (then path: \"...\")"))
    return failure();
  if (!tok.isKeyword("path"))
    return expected("'path:' after the storage node");
  consume();
  if (expect(Token::Colon, "after 'path'"))
    return failure();
  if (!tok.is(Token::String))
    return expected("the path as a string");
  field->setAttr("l1.at", FlatSymbolRefAttr::get(ctx, node));
  field->setAttr("l1.path", builder.getStringAttr(tok.getStringValue()));
  consume();
  if (tok.is(Token::Comma) && peek().isKeyword("format")) {
    consume();
    consume(); // 'format'
    if (expect(Token::Colon, "after 'format'"))
      return failure();
    Location at = loc();
    StringRef format;
    if (parseIdent(format, "a data format (idx, raw or text)"))
      return failure();
    if (!l1::symbolizeDataFormat(format))
      return emitError(at, "unknown data format '")
             << format << "'; expected idx, raw or text";
    field->setAttr("l1.format", builder.getStringAttr(format));
  }
  return success();
}

LogicalResult Parser::finishL1Program(ModuleOp module) {
  if (!sawL1Placement)
    return success();
  // An L3 spec with placement forms keeps its data as L3 declarations (the
  // L2 -> L1 pass reads the bindings).
  for (Operation &op : module.getBody()->getOperations())
    if (isa<l3::ModelOp, l3::LossOp, l3::GoalOp>(op) ||
        op.getDialect() == ctx->getLoadedDialect("l2"))
      return success();
  for (Operation *op : dataDecls) {
    auto data = cast<l3::DataOp>(op);
    if (data.getHintsAttr() && !data.getHintsAttr().empty())
      return emitError(data.getLoc(), "an L1 data source '")
             << data.getSymName() << "' carries no escape hatches";
    OpBuilder b(data);
    auto source = l1::DataOp::create(b, data.getLoc(), data.getSymNameAttr());
    Block &body = source.getBody().emplaceBlock();
    b.setInsertionPointToEnd(&body);
    for (Operation &f : data.getBody().front()) {
      auto field = dyn_cast<l3::FieldOp>(f);
      if (!field)
        continue;
      auto at = field->getAttrOfType<FlatSymbolRefAttr>("l1.at");
      auto path = field->getAttrOfType<StringAttr>("l1.path");
      if (!at || !path)
        return emitError(field.getLoc(), "field '")
               << field.getSymName() << "' of data '" << data.getSymName()
               << "' needs a storage binding in an L1 program: "
               << "<field> : <domain> @ <storage_node>, path: \"...\"";
      auto type = dyn_cast<RankedTensorType>(field.getDomain());
      if (!type || !type.hasStaticShape())
        return emitError(field.getLoc(), "field '")
               << field.getSymName()
               << "' of an L1 data source is a tensor(dtype, [dims]), got "
               << field.getDomain();
      l1::DataFormat format = l1::DataFormat::idx;
      if (auto f = field->getAttrOfType<StringAttr>("l1.format"))
        format = *l1::symbolizeDataFormat(f.getValue());
      l1::FieldOp::create(b, field.getLoc(), field.getSymNameAttr(),
                          TypeAttr::get(type), at, path,
                          l1::DataFormatAttr::get(ctx, format), IntegerAttr(),
                          IntegerAttr());
    }
    data.erase();
  }
  dataDecls.clear();
  return success();
}

//===----------------------------------------------------------------------===//
// Values, names and calls
//===----------------------------------------------------------------------===//

Value Parser::lookupLocal(StringRef name) {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it)
    if (Value v = it->lookup(name))
      return v;
  return {};
}

/// The window op `ref` (@actor::@window) names, or null.
static l1::WindowOp lookupWindow(ModuleOp module, SymbolRefAttr ref) {
  return dyn_cast_or_null<l1::WindowOp>(
      SymbolTable::lookupSymbolIn(module, ref));
}

/// The state field `field` of the actor that holds `window`, or null.
static l1::StateOp stateOf(Operation *window, StringRef field) {
  return dyn_cast_or_null<l1::StateOp>(
      SymbolTable::lookupSymbolIn(window->getParentOp(), field));
}

static ModuleOp moduleOf(OpBuilder &builder) {
  Operation *op = builder.getInsertionBlock()->getParentOp();
  while (op && !isa<ModuleOp>(op))
    op = op->getParentOp();
  return cast_or_null<ModuleOp>(op);
}

FailureOr<Value> Parser::resolveName(StringRef name, Location at) {
  if (Value v = lookupLocal(name))
    return v;
  if (bodyKind == BodyKind::Handler && currentActor) {
    if (auto state = dyn_cast_or_null<l1::StateOp>(
            SymbolTable::lookupSymbolIn(currentActor, name))) {
      auto type = cast<RankedTensorType>(state.getType());
      return l1::StateReadOp::create(builder, at, type,
                                     FlatSymbolRefAttr::get(ctx, name))
          .getResult();
    }
    return emitError(at, "unknown name '")
           << name << "': not an argument, a let binding or a state field of "
           << "actor '" << cast<l1::ActorOp>(currentActor).getSymName() << "'";
  }
  if (bodyKind == BodyKind::Graph) {
    // A bare field of a window the graph reads.
    ModuleOp module = moduleOf(builder);
    SmallVector<std::pair<SymbolRefAttr, l1::StateOp>> found;
    for (SymbolRefAttr ref : currentReads)
      if (l1::WindowOp window = lookupWindow(module, ref))
        if (llvm::any_of(window.getFields(), [&](Attribute a) {
              return cast<FlatSymbolRefAttr>(a).getValue() == name;
            }))
          if (l1::StateOp state = stateOf(window, name))
            found.push_back({ref, state});
    if (found.size() > 1)
      return emitError(at, "'")
             << name << "' is a field of more than one window in 'reads' ("
             << found[0].first << ", " << found[1].first
             << "); write <actor>.<window>." << name;
    if (found.size() == 1)
      return l1::WindowReadOp::create(
                 builder, at, cast<RankedTensorType>(found[0].second.getType()),
                 found[0].first, FlatSymbolRefAttr::get(ctx, name))
          .getResult();
    InFlightDiagnostic d = emitError(at, "unknown name '")
                           << name << "': not an argument, a let binding or "
                           << "a field of a window in 'reads'";
    for (SymbolRefAttr ref : currentReads)
      if (!lookupWindow(module, ref)) {
        d << " (window " << ref << " is not declared above: declare the "
          << "actor before the graphs that read it)";
        break;
      }
    return d;
  }
  return emitError(at, "unknown name '")
         << name << "': not an argument or a let binding of this stage";
}

FailureOr<std::pair<SymbolRefAttr, Type>> Parser::resolveWindowField(
    ArrayRef<std::pair<StringRef, Location>> path) {
  if (path.size() != 3)
    return emitError(path.front().second,
                     "a window field is written <actor>.<window>.<field>");
  ModuleOp module = moduleOf(builder);
  auto [actorName, actorLoc] = path[0];
  auto actor = dyn_cast_or_null<l1::ActorOp>(
      SymbolTable::lookupSymbolIn(module, actorName));
  if (!actor)
    return emitError(actorLoc, "unknown actor '")
           << actorName << "' (declare the actor before the forms that read it)";
  auto ref = SymbolRefAttr::get(ctx, actorName,
                                {FlatSymbolRefAttr::get(ctx, path[1].first)});
  l1::WindowOp window = lookupWindow(module, ref);
  if (!window)
    return emitError(path[1].second, "actor '")
           << actorName << "' has no window '" << path[1].first << "'";
  if (!llvm::any_of(window.getFields(), [&](Attribute a) {
        return cast<FlatSymbolRefAttr>(a).getValue() == path[2].first;
      }))
    return emitError(path[2].second, "window '")
           << actorName << "." << path[1].first << "' has no field '"
           << path[2].first << "'";
  l1::StateOp state = stateOf(window, path[2].first);
  if (!state)
    return emitError(path[2].second, "actor '")
           << actorName << "' has no state field '" << path[2].first << "'";
  return std::pair<SymbolRefAttr, Type>(ref, state.getType());
}

/// arg ::= [ ident ':' ] ( ['-'] number | string | '[' items ']' | expr )
ParseResult Parser::parseL1Arg(L1Arg &arg) {
  if (tok.is(Token::Identifier) && peek().is(Token::Colon)) {
    arg.key = tok.spelling;
    arg.keyLoc = loc();
    consume();
    consume();
  }
  arg.loc = loc();
  if (tok.is(Token::Minus) || tok.is(Token::Integer) || tok.is(Token::Float)) {
    arg.kind = L1Arg::Number;
    arg.negative = consumeIf(Token::Minus);
    if (!tok.is(Token::Integer) && !tok.is(Token::Float))
      return expected("a number after '-'");
    arg.tok = tok;
    consume();
    return success();
  }
  if (tok.is(Token::Suffixed))
    return error("malformed number '" + tok.spelling +
                 "': unexpected suffix '" + tok.getSuffix() + "'");
  if (tok.is(Token::String)) {
    arg.kind = L1Arg::Str;
    arg.tok = tok;
    consume();
    return success();
  }
  if (tok.is(Token::LSquare)) {
    arg.kind = L1Arg::List;
    consume();
    if (!tok.is(Token::RSquare)) {
      do {
        if (!tok.is(Token::Identifier) && !tok.is(Token::Integer))
          return expected("a name or an integer in the list");
        arg.items.push_back(tok);
        consume();
      } while (consumeIf(Token::Comma));
    }
    return expect(Token::RSquare, "to close the list");
  }
  // A bare word stays a word until the callee says what it is.
  if (tok.is(Token::Identifier)) {
    Token next = peek();
    if (!next.is(Token::LParen) && !next.is(Token::Dot)) {
      arg.kind = L1Arg::Word;
      arg.tok = tok;
      consume();
      return success();
    }
  }
  arg.kind = L1Arg::Val;
  FailureOr<Value> v = parseExpr();
  if (failed(v))
    return failure();
  arg.value = *v;
  return success();
}

/// Whether argument `pos` (positional) or `key` of tensor op `callee` is a
/// tensor operand, not a keyword (a dtype, a predicate) or an attribute.
static bool isOperandSlot(StringRef callee, size_t pos, StringRef key) {
  if (!callee.consume_front("tensor_"))
    return false;
  if (!key.empty())
    return llvm::is_contained({"lhs", "rhs", "operand", "scalar", "cond",
                               "labels"},
                              key);
  if (callee == "const")
    return false;
  if (callee == "cmp")
    return pos == 1 || pos == 2;
  if (llvm::is_contained({"add", "sub", "mul", "div", "max", "min", "matmul",
                          "scale"},
                         callee))
    return pos < 2;
  if (callee == "select")
    return pos < 3;
  return pos == 0;
}

/// args ::= '(' [ arg { ',' arg } ] ')'
ParseResult Parser::parseL1Args(SmallVectorImpl<L1Arg> &args,
                                StringRef callee) {
  if (expect(Token::LParen, "to open the call's arguments"))
    return failure();
  size_t positional = 0;
  if (!tok.is(Token::RParen)) {
    do {
      args.emplace_back(loc());
      L1Arg &arg = args.back();
      if (parseL1Arg(arg))
        return failure();
      bool operand = isOperandSlot(callee, positional, arg.key);
      if (arg.key.empty())
        ++positional;
      if (arg.kind == L1Arg::Word && operand) {
        FailureOr<Value> v = resolveName(arg.tok.spelling, arg.loc);
        if (failed(v))
          return failure();
        arg.kind = L1Arg::Val;
        arg.value = *v;
      }
    } while (consumeIf(Token::Comma));
  }
  return expect(Token::RParen, "to close the call's arguments");
}

static double numberValue(const Parser::L1Arg &arg) {
  std::string text = arg.tok.spelling.str();
  double v = std::strtod(text.c_str(), nullptr);
  return arg.negative ? -v : v;
}

FailureOr<Value> Parser::argValue(L1Arg &arg, Type eltHint) {
  switch (arg.kind) {
  case L1Arg::Val:
    return arg.value;
  case L1Arg::Word:
    return resolveName(arg.tok.spelling, arg.loc);
  case L1Arg::Number: {
    if (bodyKind == BodyKind::Stage)
      return emitError(arg.loc, "a stage moves buffers; it has no constants");
    // A literal operand is a rank-0 constant of its partner's element type.
    Type elt = eltHint ? eltHint : builder.getF32Type();
    auto type = RankedTensorType::get({}, elt);
    double v = numberValue(arg);
    if (!std::isfinite(v))
      return emitError(arg.loc, "number '") << arg.tok.spelling
                                             << "' is out of range";
    auto c = l1::ConstOp::create(builder, arg.loc, type,
                                 builder.getF64FloatAttr(v));
    if (failed(checkBuilt(c)))
      return failure();
    return c.getResult();
  }
  case L1Arg::List:
  case L1Arg::Str:
    break;
  }
  return emitError(arg.loc, "expected a value here");
}

LogicalResult Parser::checkBuilt(Operation *op) {
  bool printOp = ctx->shouldPrintOpOnDiagnostic();
  ctx->printOpOnDiagnostic(false);
  LogicalResult result = mlir::verify(op, /*verifyRecursively=*/false);
  ctx->printOpOnDiagnostic(printOp);
  return result;
}

/// expr ::= call | ident [ '.' ident '.' ident ] | ['-'] number
namespace {
/// Counts nesting (of calls, of `if`s) so that hostile input cannot exhaust
/// the stack.
struct NestingGuard {
  unsigned &depth;
  explicit NestingGuard(unsigned &d) : depth(d) { ++depth; }
  ~NestingGuard() { --depth; }
};
} // namespace

FailureOr<Value> Parser::parseExpr() {
  Location at = loc();
  if (nestingDepth >= kMaxDomainDepth)
    return error("expression nested more than " +
                 llvm::Twine(kMaxDomainDepth) + " levels deep");
  NestingGuard guard(nestingDepth);
  if (tok.is(Token::Minus) || tok.is(Token::Integer) || tok.is(Token::Float) ||
      tok.is(Token::Suffixed)) {
    L1Arg arg(at);
    if (parseL1Arg(arg))
      return failure();
    return argValue(arg);
  }
  if (!tok.is(Token::Identifier))
    return expected("a value (a name, a number or a tensor op call)");
  StringRef name = tok.spelling;
  consume();
  if (tok.is(Token::LParen)) {
    SmallVector<L1Arg, 4> args;
    if (parseL1Args(args, name))
      return failure();
    if (bodyKind == BodyKind::Stage) {
      FailureOr<SmallVector<Value>> results = buildStageCall(name, at, args);
      if (failed(results))
        return failure();
      if (results->size() != 1)
        return emitError(at, "'") << name << "' gives " << results->size()
                                  << " values here, where one is expected";
      return results->front();
    }
    return buildTensorCall(name, at, args);
  }
  if (tok.is(Token::Dot)) {
    SmallVector<std::pair<StringRef, Location>> path{{name, at}};
    while (consumeIf(Token::Dot)) {
      Location partLoc = loc();
      StringRef part;
      if (parseIdent(part, "a name after '.'"))
        return failure();
      path.push_back({part, partLoc});
    }
    if (bodyKind != BodyKind::Graph)
      return emitError(at, "a window field is read in a tensor graph; a stage "
                           "copies it with window_copy(...)");
    FailureOr<std::pair<SymbolRefAttr, Type>> field = resolveWindowField(path);
    if (failed(field))
      return failure();
    return l1::WindowReadOp::create(builder, at,
                                    cast<RankedTensorType>(field->second),
                                    field->first,
                                    FlatSymbolRefAttr::get(ctx, path[2].first))
        .getResult();
  }
  return resolveName(name, at);
}

//===----------------------------------------------------------------------===//
// Tensor ops
//===----------------------------------------------------------------------===//

namespace {
enum class TOp {
  Binary, Unary, Matmul, Scale, Broadcast, Transpose, Reshape, Reduce, Cmp,
  Select, Cast, OneHot, Gather, ScatterAdd, Const, Random
};
struct TensorOpInfo {
  StringRef name; ///< after `tensor_`
  TOp kind;
};
} // namespace

static constexpr TensorOpInfo kTensorOps[] = {
    {"matmul", TOp::Matmul},         {"add", TOp::Binary},
    {"sub", TOp::Binary},            {"mul", TOp::Binary},
    {"div", TOp::Binary},            {"max", TOp::Binary},
    {"min", TOp::Binary},            {"scale", TOp::Scale},
    {"exp", TOp::Unary},             {"log", TOp::Unary},
    {"sqrt", TOp::Unary},            {"reciprocal", TOp::Unary},
    {"tanh", TOp::Unary},            {"cos", TOp::Unary},
    {"abs", TOp::Unary},             {"sign", TOp::Unary},
    {"neg", TOp::Unary},             {"broadcast", TOp::Broadcast},
    {"transpose", TOp::Transpose},   {"reshape", TOp::Reshape},
    {"reduce_sum", TOp::Reduce},     {"reduce_mean", TOp::Reduce},
    {"reduce_max", TOp::Reduce},     {"cmp", TOp::Cmp},
    {"select", TOp::Select},         {"cast", TOp::Cast},
    {"one_hot", TOp::OneHot},        {"const", TOp::Const},
    {"random", TOp::Random},         {"gather", TOp::Gather},
    {"scatter_add", TOp::ScatterAdd},
};

/// Binds a call's arguments to parameter names (positional in order, or by
/// key); reports unknown, duplicate and surplus arguments.
static LogicalResult bindL1Args(StringRef callee, Location at,
                                SmallVectorImpl<Parser::L1Arg> &args,
                                ArrayRef<StringRef> params, size_t required,
                                SmallVectorImpl<Parser::L1Arg *> &slots) {
  slots.assign(params.size(), nullptr);
  size_t next = 0;
  bool sawKey = false;
  for (Parser::L1Arg &arg : args) {
    size_t index;
    if (arg.key.empty()) {
      if (sawKey)
        return emitError(arg.loc, "positional argument after a keyword "
                                  "argument in '")
               << callee << "'";
      if (next >= params.size())
        return emitError(arg.loc, "'")
               << callee << "' takes " << params.size() << " argument"
               << (params.size() == 1 ? "" : "s") << " ("
               << llvm::join(params, ", ") << ")";
      index = next++;
    } else {
      sawKey = true;
      auto it = llvm::find(params, arg.key);
      if (it == params.end())
        return emitError(arg.keyLoc, "'")
               << callee << "' has no argument '" << arg.key << "'; it takes "
               << llvm::join(params, ", ");
      index = it - params.begin();
    }
    if (slots[index])
      return emitError(arg.key.empty() ? arg.loc : arg.keyLoc,
                       "duplicate argument '")
             << params[index] << "' in '" << callee << "'";
    slots[index] = &arg;
  }
  for (size_t i = 0; i < required; ++i)
    if (!slots[i])
      return emitError(at, "'") << callee << "' needs its argument '"
                                << params[i] << "' ("
                                << llvm::join(params, ", ") << ")";
  return success();
}

/// An integer list argument (`[128, 256]`).
static FailureOr<SmallVector<int64_t>> intList(Parser::L1Arg *arg,
                                               StringRef what, bool positive) {
  if (arg->kind != Parser::L1Arg::List)
    return emitError(arg->loc, "expected ")
           << what << " as a list of integers ([128, 256])";
  SmallVector<int64_t> out;
  for (const Token &t : arg->items) {
    int64_t v;
    if (!t.is(Token::Integer) || t.spelling.getAsInteger(10, v) ||
        (positive && v <= 0))
      return emitError(arg->loc, "expected ")
             << what << " as a list of " << (positive ? "positive " : "")
             << "integers, got '" << t.spelling << "'";
    out.push_back(v);
  }
  return out;
}

static FailureOr<int64_t> intArgOf(Parser::L1Arg *arg, StringRef what) {
  int64_t v;
  if (arg->kind != Parser::L1Arg::Number || !arg->tok.is(Token::Integer) ||
      arg->tok.spelling.getAsInteger(10, v))
    return emitError(arg->loc, "expected ") << what << " as an integer";
  return arg->negative ? -v : v;
}

FailureOr<Value> Parser::buildTensorCall(StringRef name, Location at,
                                         SmallVectorImpl<L1Arg> &args) {
  const TensorOpInfo *info = nullptr;
  if (name.starts_with("tensor_"))
    for (const TensorOpInfo &candidate : kTensorOps)
      if (candidate.name == name.drop_front(7))
        info = &candidate;
  if (!info) {
    SmallVector<StringRef> names;
    for (const TensorOpInfo &candidate : kTensorOps)
      names.push_back(candidate.name);
    bool bare = llvm::any_of(kTensorOps, [&](const TensorOpInfo &c) {
      return c.name == name;
    });
    InFlightDiagnostic d = emitError(at, "unknown tensor op '") << name << "'";
    if (bare)
      d << "; did you mean 'tensor_" << name << "'?";
    else
      d << "; expected tensor_<op> with <op> one of " << llvm::join(names, ", ");
    return d;
  }
  StringRef op = info->name;
  std::string callee = name.str();
  SmallVector<L1Arg *> a;
  auto bindArgs = [&](ArrayRef<StringRef> params, size_t required) {
    return bindL1Args(callee, at, args, params, required, a);
  };
  auto shapeFail = [&](StringRef message) -> InFlightDiagnostic {
    return emitCheckError(at, Property::Consistency, "L1.5")
           << op << ": " << message;
  };
  auto tensorOf = [&](L1Arg *arg, Type hint = Type()) -> FailureOr<Value> {
    FailureOr<Value> v = argValue(*arg, hint);
    if (failed(v))
      return failure();
    if (!isa<RankedTensorType>(v->getType()))
      return emitError(arg->loc, "'")
             << callee << "' takes tensors, got " << v->getType();
    return *v;
  };
  auto typeOf = [](Value v) { return cast<RankedTensorType>(v.getType()); };
  // Binds the call's arguments, then its first as the tensor it operates on.
  auto bindOperand = [&](ArrayRef<StringRef> params,
                         size_t required) -> FailureOr<Value> {
    if (failed(bindArgs(params, required)))
      return failure();
    return tensorOf(a[0]);
  };
  // An optional integer-list argument (dims, perm): its values and the
  // attribute that carries them, both empty when it is absent.
  auto optionalInts = [&](L1Arg *arg, StringRef what, SmallVector<int64_t> &values,
                          DenseI64ArrayAttr &attr) -> LogicalResult {
    if (!arg)
      return success();
    FailureOr<SmallVector<int64_t>> v = intList(arg, what, false);
    if (failed(v))
      return failure();
    values = *v;
    attr = builder.getDenseI64ArrayAttr(values);
    return success();
  };
  auto dtypeArg = [&](L1Arg *arg, Type &dtype) -> LogicalResult {
    if (arg->kind != L1Arg::Word)
      return emitError(arg->loc, "expected a dtype (f32, u8, ...)");
    StringRef s = arg->tok.spelling;
    dtype = namedDtype(ctx, s);
    if (!dtype)
      return emitError(arg->loc, "unknown dtype '")
             << s << "'; expected f16, bf16, f32, f64, bool, iN or uN";
    return success();
  };

  Operation *built = nullptr;
  switch (info->kind) {
  case TOp::Binary:
  case TOp::Matmul: {
    if (failed(bindArgs({"lhs", "rhs"}, 2)))
      return failure();
    // A literal takes its partner's element type.
    FailureOr<Value> l = failure(), r = failure();
    if (a[0]->kind == L1Arg::Number && a[1]->kind != L1Arg::Number) {
      r = tensorOf(a[1]);
      if (failed(r))
        return failure();
      l = tensorOf(a[0], typeOf(*r).getElementType());
    } else {
      l = tensorOf(a[0]);
      if (failed(l))
        return failure();
      r = tensorOf(a[1], typeOf(*l).getElementType());
    }
    if (failed(l) || failed(r))
      return failure();
    auto lt = typeOf(*l), rt = typeOf(*r);
    sh::ShapeResult s = info->kind == TOp::Matmul
                            ? sh::matmulShape(lt.getShape(), rt.getShape())
                            : sh::elementwiseShape(lt.getShape(), rt.getShape());
    if (!s)
      return shapeFail(s.message());
    auto res = RankedTensorType::get(s.shape(), lt.getElementType());
    OperationState state(at, ("l1." + op).str());
    state.addOperands({*l, *r});
    state.addTypes(res);
    built = builder.create(state);
    break;
  }
  case TOp::Unary: {
    FailureOr<Value> x = bindOperand({"operand"}, 1);
    if (failed(x))
      return failure();
    OperationState state(at, ("l1." + op).str());
    state.addOperands(*x);
    state.addTypes(x->getType());
    built = builder.create(state);
    break;
  }
  case TOp::Scale: {
    FailureOr<Value> x = bindOperand({"operand", "scalar"}, 2);
    if (failed(x))
      return failure();
    FailureOr<Value> sc = tensorOf(a[1], typeOf(*x).getElementType());
    if (failed(sc))
      return failure();
    built = l1::ScaleOp::create(builder, at, x->getType(), *x, *sc);
    break;
  }
  case TOp::Broadcast: {
    FailureOr<Value> x = bindOperand({"operand", "shape", "dims"}, 2);
    if (failed(x))
      return failure();
    FailureOr<SmallVector<int64_t>> shape = intList(a[1], "the shape", true);
    if (failed(shape))
      return failure();
    SmallVector<int64_t> dims;
    DenseI64ArrayAttr dimsAttr;
    if (failed(optionalInts(a[2], "dims", dims, dimsAttr)))
      return failure();
    sh::ShapeResult s = sh::broadcastShape(typeOf(*x).getShape(), *shape, dims);
    if (!s)
      return shapeFail(s.message());
    built = l1::BroadcastOp::create(
        builder, at, RankedTensorType::get(*shape, typeOf(*x).getElementType()),
        *x, dimsAttr);
    break;
  }
  case TOp::Transpose: {
    FailureOr<Value> x = bindOperand({"operand", "perm"}, 1);
    if (failed(x))
      return failure();
    SmallVector<int64_t> perm;
    DenseI64ArrayAttr permAttr;
    if (failed(optionalInts(a[1], "perm", perm, permAttr)))
      return failure();
    sh::ShapeResult s = sh::transposeShape(typeOf(*x).getShape(), perm);
    if (!s)
      return shapeFail(s.message());
    built = l1::TransposeOp::create(
        builder, at, RankedTensorType::get(s.shape(), typeOf(*x).getElementType()),
        *x, permAttr);
    break;
  }
  case TOp::Reshape: {
    FailureOr<Value> x = bindOperand({"operand", "shape"}, 2);
    if (failed(x))
      return failure();
    FailureOr<SmallVector<int64_t>> shape = intList(a[1], "the shape", true);
    if (failed(shape))
      return failure();
    sh::ShapeResult s = sh::reshapeShape(typeOf(*x).getShape(), *shape);
    if (!s)
      return shapeFail(s.message());
    built = l1::ReshapeOp::create(
        builder, at, RankedTensorType::get(*shape, typeOf(*x).getElementType()),
        *x);
    break;
  }
  case TOp::Reduce: {
    FailureOr<Value> x = bindOperand({"operand", "axis"}, 1);
    if (failed(x))
      return failure();
    std::optional<int64_t> axis;
    IntegerAttr axisAttr;
    if (a[1]) {
      FailureOr<int64_t> v = intArgOf(a[1], "the axis");
      if (failed(v))
        return failure();
      axis = *v;
      axisAttr = builder.getI64IntegerAttr(*v);
    }
    sh::ShapeResult s = sh::reduceShape(typeOf(*x).getShape(), axis);
    if (!s)
      return shapeFail(s.message());
    OperationState state(at, ("l1." + op).str());
    state.addOperands(*x);
    state.addTypes(RankedTensorType::get(s.shape(), typeOf(*x).getElementType()));
    if (axisAttr)
      state.addAttribute("axis", axisAttr);
    built = builder.create(state);
    break;
  }
  case TOp::Cmp: {
    if (failed(bindArgs({"predicate", "lhs", "rhs"}, 3)))
      return failure();
    std::optional<l1::CmpPredicate> pred;
    if (a[0]->kind == L1Arg::Word)
      pred = l1::symbolizeCmpPredicate(a[0]->tok.spelling);
    if (!pred)
      return emitError(a[0]->loc, "expected a comparison predicate (eq, ne, "
                                  "lt, le, gt or ge) as the first argument");
    FailureOr<Value> l = tensorOf(a[1]);
    if (failed(l))
      return failure();
    FailureOr<Value> r = tensorOf(a[2], typeOf(*l).getElementType());
    if (failed(r))
      return failure();
    sh::ShapeResult s =
        sh::elementwiseShape(typeOf(*l).getShape(), typeOf(*r).getShape());
    if (!s)
      return shapeFail(s.message());
    built = l1::CmpOp::create(
        builder, at, RankedTensorType::get(s.shape(), builder.getI1Type()),
        *pred, *l, *r);
    break;
  }
  case TOp::Select: {
    if (failed(bindArgs({"cond", "lhs", "rhs"}, 3)))
      return failure();
    FailureOr<Value> c = tensorOf(a[0]);
    if (failed(c))
      return failure();
    FailureOr<Value> l = tensorOf(a[1]);
    if (failed(l))
      return failure();
    FailureOr<Value> r = tensorOf(a[2], typeOf(*l).getElementType());
    if (failed(r))
      return failure();
    built = l1::SelectOp::create(builder, at, l->getType(), *c, *l, *r);
    break;
  }
  case TOp::Cast: {
    FailureOr<Value> x = bindOperand({"operand", "dtype"}, 2);
    if (failed(x))
      return failure();
    Type dtype;
    if (failed(dtypeArg(a[1], dtype)))
      return failure();
    built = l1::CastOp::create(
        builder, at, RankedTensorType::get(typeOf(*x).getShape(), dtype), *x);
    break;
  }
  case TOp::OneHot: {
    FailureOr<Value> x = bindOperand({"labels", "classes", "dtype"}, 2);
    if (failed(x))
      return failure();
    FailureOr<int64_t> classes = intArgOf(a[1], "the number of classes");
    if (failed(classes))
      return failure();
    if (*classes <= 0)
      return emitError(a[1]->loc, "the number of classes is positive");
    Type dtype = builder.getF32Type();
    if (a[2] && failed(dtypeArg(a[2], dtype)))
      return failure();
    sh::ShapeResult s = sh::oneHotShape(typeOf(*x).getShape(), *classes);
    if (!s)
      return shapeFail(s.message());
    built = l1::OneHotOp::create(builder, at,
                                 RankedTensorType::get(s.shape(), dtype), *x,
                                 builder.getI64IntegerAttr(*classes));
    break;
  }
  case TOp::Gather:
  case TOp::ScatterAdd: {
    // tensor_gather(table, ids): rows of a [rows, width] table;
    // tensor_scatter_add(src, ids, rows: n): the rows summed into n rows.
    bool gather = info->kind == TOp::Gather;
    FailureOr<Value> x =
        gather ? bindOperand({"table", "ids"}, 2) : bindOperand({"src", "ids", "rows"}, 3);
    if (failed(x))
      return failure();
    FailureOr<Value> ids = tensorOf(a[1]);
    if (failed(ids))
      return failure();
    auto xt = typeOf(*x);
    SmallVector<int64_t> shape;
    if (gather) {
      if (xt.getRank() != 2)
        return shapeFail("the table is rank 2 ([rows, width])");
      shape.assign(typeOf(*ids).getShape().begin(), typeOf(*ids).getShape().end());
      shape.push_back(xt.getShape()[1]);
      built = l1::GatherOp::create(builder, at,
                                   RankedTensorType::get(shape, xt.getElementType()), *x, *ids);
      break;
    }
    FailureOr<int64_t> rows = intArgOf(a[2], "the number of rows");
    if (failed(rows))
      return failure();
    if (*rows <= 0)
      return emitError(a[2]->loc, "the number of rows is positive");
    if (xt.getRank() == 0)
      return shapeFail("the source has rows (rank 1 or more)");
    shape = {*rows, xt.getShape().back()};
    built = l1::ScatterAddOp::create(builder, at,
                                     RankedTensorType::get(shape, xt.getElementType()), *x, *ids);
    break;
  }
  case TOp::Random: {
    FailureOr<Value> counter = bindOperand({"counter", "shape", "seed", "stream"}, 4);
    if (failed(counter))
      return failure();
    FailureOr<SmallVector<int64_t>> shape = intList(a[1], "the shape", true);
    if (failed(shape))
      return failure();
    FailureOr<int64_t> seed = intArgOf(a[2], "the seed");
    if (failed(seed))
      return failure();
    FailureOr<int64_t> stream = intArgOf(a[3], "the stream");
    if (failed(stream))
      return failure();
    built = l1::RandomOp::create(builder, at, RankedTensorType::get(*shape, builder.getF32Type()),
                                 *counter, builder.getI64IntegerAttr(*seed),
                                 builder.getI64IntegerAttr(*stream));
    break;
  }
  case TOp::Const: {
    if (failed(bindArgs({"value", "shape", "dtype"}, 1)))
      return failure();
    if (a[0]->kind != L1Arg::Number)
      return emitError(a[0]->loc, "expected the constant's value (a number)");
    SmallVector<int64_t> shape;
    if (a[1]) {
      FailureOr<SmallVector<int64_t>> s = intList(a[1], "the shape", true);
      if (failed(s))
        return failure();
      shape = *s;
    }
    Type dtype = builder.getF32Type();
    if (a[2] && failed(dtypeArg(a[2], dtype)))
      return failure();
    double v = numberValue(*a[0]);
    if (!std::isfinite(v))
      return emitError(a[0]->loc, "number '")
             << a[0]->tok.spelling << "' is out of range";
    built = l1::ConstOp::create(builder, at, RankedTensorType::get(shape, dtype),
                                builder.getF64FloatAttr(v));
    break;
  }
  }
  if (failed(checkBuilt(built)))
    return failure();
  return built->getResult(0);
}

//===----------------------------------------------------------------------===//
// actor
//===----------------------------------------------------------------------===//

/// actor ::= 'actor' ident 'on' node '{' { state | window | handler } '}'
/// state ::= 'state' '{' { ident ':' type [','] [ 'init' ':' ] init } '}'
/// window ::= 'window' ident ':' '(' ident { ',' ident } ')'
///            'readers' '(' ident { ',' ident } ')'
/// handler ::= 'on' ident args '{' { stmt } '}'
ParseResult Parser::parseActor() {
  Location nameLoc = loc(), open = nameLoc;
  StringRef name;
  FlatSymbolRefAttr node;
  if (parsePlacedHead("actor", "actor", name, nameLoc, node, open))
    return failure();
  auto actor = l1::ActorOp::create(builder, nameLoc, builder.getStringAttr(name),
                                   node);
  Block &body = actor.getBody().emplaceBlock();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&body);
  llvm::StringMap<Location> members;
  auto declare = [&](StringRef member, Location at) -> ParseResult {
    if (auto [it, inserted] = members.try_emplace(member, at); !inserted) {
      InFlightDiagnostic d = emitError(at, "actor '")
                             << name << "' already has a member '" << member
                             << "'";
      d.attachNote(it->second) << "the first one is here";
      return d;
    }
    return success();
  };
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false))
      return unclosedBody("actor", name, open);
    if (tok.isKeyword("state")) {
      consume();
      Location stateOpen = loc();
      if (expect(Token::LBrace, "to open the state block"))
        return failure();
      while (!tok.is(Token::RBrace)) {
        if (tok.is(Token::Eof) || startsTopLevelForm(false)) {
          InFlightDiagnostic d = expected("'}' to close the state block");
          d.attachNote(stateOpen) << "the state block opens here";
          return d;
        }
        Location fieldLoc = loc();
        StringRef field;
        RankedTensorType type;
        if (parseIdent(field, "a state field or '}'") ||
            declare(field, fieldLoc) ||
            expect(Token::Colon, "after the state field's name") ||
            parseTensorType(type))
          return failure();
        consumeIf(Token::Comma);
        if (tok.isKeyword("init") && peek().is(Token::Colon)) {
          consume();
          consume();
        }
        Location initLoc = loc();
        StringRef init;
        if (parseIdent(init, "an initializer (zeros, ones, kaiming, xavier, planned_steps "
                             "or training_mode)"))
          return failure();
        std::optional<l1::InitKind> kind = l1::symbolizeInitKind(init);
        if (!kind)
          return emitError(initLoc, "unknown initializer '")
                 << init
                 << "'; expected zeros, ones, kaiming, xavier, planned_steps or training_mode";
        l1::StateOp::create(builder, fieldLoc, builder.getStringAttr(field),
                            TypeAttr::get(type),
                            l1::InitKindAttr::get(ctx, *kind));
      }
      consume(); // '}'
    } else if (tok.isKeyword("window")) {
      consume();
      Location windowLoc = loc();
      StringRef window;
      SmallVector<Attribute> fields, readers;
      if (parseIdent(window, "a window name") || declare(window, windowLoc) ||
          expect(Token::Colon, "after the window's name") ||
          expect(Token::LParen, "to open the window's fields") ||
          parseRefList(fields, /*flat=*/true, false) ||
          expect(Token::RParen, "to close the window's fields"))
        return failure();
      if (!tok.isKeyword("readers"))
        return expected("'readers(...)' after the window's fields");
      consume();
      if (expect(Token::LParen, "after 'readers'") ||
          (!tok.is(Token::RParen) && parseRefList(readers, true, false)) ||
          expect(Token::RParen, "to close the readers"))
        return failure();
      l1::WindowOp::create(builder, windowLoc, builder.getStringAttr(window),
                           builder.getArrayAttr(fields),
                           builder.getArrayAttr(readers));
    } else if (tok.isKeyword("on")) {
      consume();
      Location msgLoc = loc();
      StringRef msg;
      if (parseIdent(msg, "a message name after 'on'") ||
          declare(msg, msgLoc))
        return failure();
      auto handler = l1::HandlerOp::create(builder, msgLoc,
                                           builder.getStringAttr(msg));
      Block &entry = handler.getBody().emplaceBlock();
      scopes.clear();
      scopes.emplace_back();
      bodyKind = BodyKind::Handler;
      currentActor = actor;
      if (parseTypedArgs(entry, /*buffers=*/false))
        return failure();
      Location bodyOpen = loc();
      if (expect(Token::LBrace, "to open the handler's body"))
        return failure();
      OpBuilder::InsertionGuard inner(builder);
      builder.setInsertionPointToEnd(&entry);
      if (parseHandlerBody(bodyOpen))
        return failure();
      currentActor = nullptr;
    } else {
      return expected("'state', 'window', 'on <Message>(...)' or '}' in actor '" +
                      name + "'");
    }
  }
  consume(); // '}'
  return success();
}

ParseResult Parser::parseLetNames(
    SmallVectorImpl<std::pair<StringRef, Location>> &names) {
  do {
    Location at = loc();
    StringRef n;
    if (parseIdent(n, "a name after 'let'"))
      return failure();
    names.push_back({n, at});
  } while (consumeIf(Token::Comma));
  return expect(Token::Equal, "after the let's names");
}

ParseResult Parser::parseSingleLet() {
  consume(); // 'let'
  SmallVector<std::pair<StringRef, Location>> names;
  if (parseLetNames(names))
    return failure();
  if (names.size() != 1)
    return emitError(names[1].second, "a tensor op gives one value");
  FailureOr<Value> v = parseExpr();
  if (failed(v))
    return failure();
  bind(names[0].first, *v);
  return success();
}

/// body ::= { 'let' ident '=' expr | field '=' expr } '}'
ParseResult Parser::parseHandlerBody(Location open) {
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false)) {
      InFlightDiagnostic d = expected("'}' to close the handler's body");
      d.attachNote(open) << "the body opens here";
      return d;
    }
    if (tok.isKeyword("let")) {
      if (parseSingleLet())
        return failure();
      continue;
    }
    // `w = tensor_sub(w, ...)`: a state write.
    Location at = loc();
    StringRef field;
    if (parseIdent(field, "'let', a state field assignment or '}'"))
      return failure();
    if (!tok.is(Token::Equal))
      return expected("'=' after '" + field +
                      "' (a statement is 'let x = ...' or '<state> = ...')");
    // The target is always a state field (there is no local mutation), even
    // where a let of the same name shadows the field for reading.
    auto state = dyn_cast_or_null<l1::StateOp>(
        SymbolTable::lookupSymbolIn(currentActor, field));
    if (!state && lookupLocal(field))
      return emitError(at, "cannot assign to '")
             << field << "': let bindings and arguments are immutable; only "
             << "state fields are assigned";
    if (!state)
      return emitError(at, "unknown state field '")
             << field << "' of actor '"
             << cast<l1::ActorOp>(currentActor).getSymName() << "'";
    consume(); // '='
    FailureOr<Value> v = parseExpr();
    if (failed(v))
      return failure();
    auto write = l1::StateWriteOp::create(builder, at,
                                          FlatSymbolRefAttr::get(ctx, field), *v);
    if (failed(checkBuilt(write)))
      return failure();
  }
  l1::ReturnOp::create(builder, loc(), ValueRange{});
  consume(); // '}'
  return success();
}

//===----------------------------------------------------------------------===//
// tensor_graph
//===----------------------------------------------------------------------===//

/// tensor_graph ::= 'tensor_graph' ident 'on' node '{'
///                    [ 'reads' ':' refs ] [ 'then' ':' ident ]
///                    'fn' 'compute' args [ '->' '(' ident {',' ident} ')' ]
///                    '{' { 'let' ident '=' expr } 'return' '(' expr {',' expr} ')' '}'
///                  '}'
ParseResult Parser::parseTensorGraph() {
  Location nameLoc = loc(), open = nameLoc;
  StringRef name;
  FlatSymbolRefAttr node;
  if (parsePlacedHead("tensor_graph", "tensor graph", name, nameLoc, node,
                      open))
    return failure();
  SmallVector<Attribute> reads;
  FlatSymbolRefAttr then;
  while (tok.isKeyword("reads") || tok.isKeyword("then")) {
    bool isReads = tok.isKeyword("reads");
    Location keyLoc = loc();
    consume();
    if (expect(Token::Colon, isReads ? "after 'reads'" : "after 'then'"))
      return failure();
    if (isReads) {
      if (!reads.empty())
        return emitError(keyLoc, "duplicate 'reads'");
      if (parseRefList(reads, /*flat=*/false, false))
        return failure();
    } else {
      StringRef target;
      if (then)
        return emitError(keyLoc, "duplicate 'then'");
      if (parseIdent(target, "the stage the results are forwarded to"))
        return failure();
      then = FlatSymbolRefAttr::get(ctx, target);
    }
  }
  if (!tok.isKeyword("fn")) {
    if (tok.is(Token::RBrace) || tok.is(Token::Eof))
      return expected("'fn compute(...)' in tensor graph '" + name + "'");
    return expected("'reads:', 'then:' or 'fn compute(...)' in tensor graph '" +
                    name + "'");
  }
  if (parseFnName("compute", "tensor graph"))
    return failure();
  auto graph = l1::TensorGraphOp::create(builder, nameLoc,
                                         builder.getStringAttr(name), node,
                                         builder.getArrayAttr(reads), then);
  Block &entry = graph.getBody().emplaceBlock();
  if (beginFunctionBody(entry, BodyKind::Graph, reads, /*buffers=*/false))
    return failure();
  SmallVector<std::pair<StringRef, Location>> outputs;
  if (consumeIf(Token::Arrow)) {
    if (expect(Token::LParen, "to open the output names"))
      return failure();
    if (!tok.is(Token::RParen)) {
      do {
        Location at = loc();
        StringRef out;
        if (parseIdent(out, "an output name"))
          return failure();
        outputs.push_back({out, at});
      } while (consumeIf(Token::Comma));
    }
    if (expect(Token::RParen, "to close the output names"))
      return failure();
  }
  Location bodyOpen = loc();
  if (expect(Token::LBrace, "to open compute's body"))
    return failure();
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&entry);
    if (parseGraphBody(bodyOpen, outputs))
      return failure();
  }
  if (!tok.is(Token::RBrace))
    return unclosedBody("tensor_graph", name, open);
  consume();
  return success();
}

ParseResult Parser::parseGraphBody(
    Location open, ArrayRef<std::pair<StringRef, Location>> outputs) {
  while (true) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false)) {
      InFlightDiagnostic d = expected("'return (...)' and '}' to close compute");
      d.attachNote(open) << "the body opens here";
      return d;
    }
    if (tok.is(Token::RBrace))
      return error("compute ends without 'return (...)'");
    if (tok.isKeyword("return"))
      break;
    if (!tok.isKeyword("let"))
      return expected("'let' or 'return' in a tensor graph (graphs have no "
                      "mutation)");
    if (parseSingleLet())
      return failure();
  }
  Location retLoc = loc();
  consume(); // 'return'
  SmallVector<Value> results;
  SmallVector<std::pair<StringRef, Location>> written;
  bool paren = consumeIf(Token::LParen);
  if (!paren || !tok.is(Token::RParen)) {
    do {
      Location at = loc();
      if (tok.is(Token::Identifier) && !peek().is(Token::LParen))
        written.push_back({tok.spelling, at});
      FailureOr<Value> v = parseExpr();
      if (failed(v))
        return failure();
      results.push_back(*v);
    } while (consumeIf(Token::Comma));
  }
  if (paren && expect(Token::RParen, "to close the returned values"))
    return failure();
  if (!outputs.empty()) {
    if (outputs.size() != results.size())
      return emitError(retLoc, "compute declares ")
             << outputs.size() << " outputs but returns " << results.size();
    for (auto [out, w] : llvm::zip(outputs, written))
      if (out.first != w.first)
        return emitError(w.second, "output '")
               << out.first << "' is declared here, but '" << w.first
               << "' is returned";
  }
  l1::ReturnOp::create(builder, retLoc, results);
  if (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false)) {
      InFlightDiagnostic d = expected("'}' to close compute");
      d.attachNote(open) << "the body opens here";
      return d;
    }
    return expected("'}' after the return (it ends compute)");
  }
  consume();
  return success();
}

//===----------------------------------------------------------------------===//
// stage
//===----------------------------------------------------------------------===//

/// stage ::= 'stage' ident 'on' node '{' [ 'reads' ':' refs ]
///             'fn' 'process' args [ '->' result { '|' result } ]
///             '{' { stmt } '}' '}'
ParseResult Parser::parseStage() {
  Location nameLoc = loc(), open = nameLoc;
  StringRef name;
  FlatSymbolRefAttr node;
  if (parsePlacedHead("stage", "stage", name, nameLoc, node, open))
    return failure();
  SmallVector<Attribute> reads;
  if (tok.isKeyword("reads")) {
    consume();
    if (expect(Token::Colon, "after 'reads'") ||
        parseRefList(reads, /*flat=*/false, false))
      return failure();
  }
  if (!tok.isKeyword("fn"))
    return expected("'fn process(...)' in stage '" + name + "'");
  if (parseFnName("process", "stage"))
    return failure();
  auto stage = l1::StageOp::create(builder, nameLoc, builder.getStringAttr(name),
                                   node, builder.getArrayAttr(reads));
  Block &entry = stage.getBody().emplaceBlock();
  if (beginFunctionBody(entry, BodyKind::Stage, reads, /*buffers=*/true))
    return failure();
  // The result annotation (`-> forward(next, x) | drop(x)`) documents the
  // paths; the body's terminators are what the verifiers check.
  if (consumeIf(Token::Arrow)) {
    do {
      StringRef result;
      if (parseIdent(result, "a result (forward(...), drop(...) or end)"))
        return failure();
      if (tok.is(Token::LParen)) {
        unsigned depth = 0;
        do {
          if (tok.is(Token::Eof) || tok.is(Token::Error))
            return expected("')' to close the result annotation");
          if (tok.is(Token::LParen))
            ++depth;
          else if (tok.is(Token::RParen))
            --depth;
          consume();
        } while (depth);
      }
    } while (consumeIf(Token::Pipe));
  }
  Location bodyOpen = loc();
  if (expect(Token::LBrace, "to open process's body"))
    return failure();
  FailureOr<Block *> last = parseStageStatements(&entry, bodyOpen);
  if (failed(last))
    return failure();
  Location closeLoc = loc();
  consume(); // '}' of process
  if (*last) {
    // A path that reaches the closing brace ends there.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(*last);
    l1::EndOp::create(builder, closeLoc);
  }
  if (!tok.is(Token::RBrace))
    return unclosedBody("stage", name, open);
  consume();
  return success();
}

FailureOr<SmallVector<Value>> Parser::buildStageCall(
    StringRef name, Location at, SmallVectorImpl<L1Arg> &args) {
  SmallVector<L1Arg *> a;
  std::string callee = name.str();
  auto bindArgs = [&](ArrayRef<StringRef> params, size_t required) {
    return bindL1Args(callee, at, args, params, required, a);
  };
  auto buffer = [&](L1Arg *arg) -> FailureOr<Value> {
    FailureOr<Value> v = argValue(*arg);
    if (failed(v))
      return failure();
    if (!isa<l1::BufType>(v->getType()))
      return emitError(arg->loc, "'") << callee << "' takes a buffer, got "
                                      << v->getType();
    return *v;
  };
  auto word = [&](L1Arg *arg, StringRef what) -> FailureOr<StringRef> {
    if (arg->kind != L1Arg::Word)
      return emitError(arg->loc, "expected ") << what;
    return arg->tok.spelling;
  };
  ModuleOp module = moduleOf(builder);
  Operation *built = nullptr;
  if (name == "read_batch") {
    if (failed(bindArgs({"source", "fields", "batch", "order", "drop_last",
                         "seed", "into"},
                        3)))
      return failure();
    FailureOr<StringRef> source = word(a[0], "the data source's name");
    if (failed(source))
      return failure();
    Operation *data = SymbolTable::lookupSymbolIn(module, *source);
    if (!isa_and_nonnull<l3::DataOp, l1::DataOp>(data))
      return emitError(a[0]->loc, "unknown data source '")
             << *source << "' (declare the data before the stages that read it)";
    if (a[1]->kind != L1Arg::List || a[1]->items.empty())
      return emitError(a[1]->loc, "expected the fields to read as a list "
                                  "([images, labels])");
    FailureOr<int64_t> batch = intArgOf(a[2], "the batch size");
    if (failed(batch))
      return failure();
    if (*batch <= 0)
      return emitError(a[2]->loc, "the batch size is positive");
    l1::BatchOrder order = l1::BatchOrder::sequential;
    if (a[3]) {
      FailureOr<StringRef> w = word(a[3], "an order (shuffle or sequential)");
      if (failed(w))
        return failure();
      std::optional<l1::BatchOrder> o = l1::symbolizeBatchOrder(*w);
      if (!o)
        return emitError(a[3]->loc, "unknown order '")
               << *w << "'; expected shuffle or sequential";
      order = *o;
    }
    bool dropLast = false;
    if (a[4]) {
      FailureOr<StringRef> w = word(a[4], "true or false");
      if (failed(w))
        return failure();
      if (*w != "true" && *w != "false")
        return emitError(a[4]->loc, "expected true or false");
      dropLast = *w == "true";
    }
    IntegerAttr seed;
    if (a[5]) {
      FailureOr<int64_t> s = intArgOf(a[5], "the seed");
      if (failed(s))
        return failure();
      seed = builder.getI64IntegerAttr(*s);
    }
    if (!a[6])
      return emitError(at, "'read_batch' needs 'into: <memory node>' (where the "
                           "batch lands)");
    FailureOr<StringRef> into = word(a[6], "a memory node");
    if (failed(into) || checkNode(*into, a[6]->loc))
      return failure();
    SmallVector<Attribute> fields;
    SmallVector<Type> types;
    for (const Token &t : a[1]->items) {
      Location fieldAt = locOf(t.getLoc());
      if (!t.is(Token::Identifier))
        return emitError(fieldAt, "expected a field name");
      Operation *field = SymbolTable::lookupSymbolIn(data, t.spelling);
      Type fieldType;
      if (auto f = dyn_cast_or_null<l3::FieldOp>(field))
        fieldType = f.getDomain();
      else if (auto f = dyn_cast_or_null<l1::FieldOp>(field))
        fieldType = f.getType();
      if (!fieldType)
        return emitError(fieldAt, "data '")
               << *source << "' has no field '" << t.spelling << "'";
      auto tensor = dyn_cast<RankedTensorType>(fieldType);
      if (!tensor)
        return emitError(fieldAt, "field '")
               << t.spelling << "' is not a tensor; read_batch reads tensors";
      SmallVector<int64_t> shape{*batch};
      llvm::append_range(shape, tensor.getShape());
      fields.push_back(FlatSymbolRefAttr::get(ctx, t.spelling));
      types.push_back(l1::BufType::get(
          ctx, FlatSymbolRefAttr::get(ctx, *into),
          RankedTensorType::get(shape, tensor.getElementType())));
    }
    built = l1::ReadBatchOp::create(
        builder, at, types, FlatSymbolRefAttr::get(ctx, *source),
        builder.getArrayAttr(fields), builder.getI64IntegerAttr(*batch),
        l1::BatchOrderAttr::get(ctx, order),
        dropLast ? builder.getUnitAttr() : UnitAttr(), seed);
  } else if (name == "transfer") {
    if (failed(bindArgs({"buffer", "to"}, 2)))
      return failure();
    FailureOr<Value> x = buffer(a[0]);
    if (failed(x))
      return failure();
    FailureOr<StringRef> to = word(a[1], "the destination node");
    if (failed(to) || checkNode(*to, a[1]->loc))
      return failure();
    built = l1::TransferOp::create(
        builder, at,
        l1::BufType::get(ctx, FlatSymbolRefAttr::get(ctx, *to),
                         cast<l1::BufType>(x->getType()).getTensor()),
        *x);
  } else if (name == "batch_full") {
    if (failed(bindArgs({"buffer"}, 1)))
      return failure();
    FailureOr<Value> x = buffer(a[0]);
    if (failed(x))
      return failure();
    built = l1::BatchFullOp::create(builder, at, builder.getI1Type(), *x);
  } else if (name == "window_copy") {
    if (failed(bindArgs({"field"}, 1)))
      return failure();
    return emitError(at, "bind a window copy with 'let x = "
                         "window_copy(<actor>.<window>.<field>)'");
  } else {
    static constexpr StringRef kValues[] = {"read_batch", "transfer",
                                            "batch_full", "window_copy"};
    static constexpr StringRef kStatements[] = {"report", "drop", "send",
                                                "forward", "end"};
    if (llvm::is_contained(kStatements, name))
      return emitError(at, "'") << name << "' is a statement; it gives no value";
    return emitError(at, "unknown stage operation '")
           << name << "'; expected " << orList(kValues) << " (values) or "
           << orList(kStatements) << " (statements)";
  }
  if (failed(checkBuilt(built)))
    return failure();
  return SmallVector<Value>(built->getResults());
}

FailureOr<Block *> Parser::parseStageStatements(Block *block, Location open,
                                                bool once) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  Block *current = block;
  auto ended = [&](Location at) -> InFlightDiagnostic {
    return emitError(at, "unreachable: the path already ended (forward and end "
                         "end a path)");
  };
  for (bool first = true; !tok.is(Token::RBrace) && (first || !once);
       first = false) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false)) {
      InFlightDiagnostic d = expected("'}' to close the block");
      d.attachNote(open) << "the block opens here";
      return d;
    }
    Location at = loc();
    if (!tok.is(Token::Identifier))
      return expected("a stage statement (let, if, report, drop, send, "
                      "forward or end)");
    if (!current)
      return ended(at);
    StringRef word = tok.spelling;
    if (word == "let") {
      consume();
      SmallVector<std::pair<StringRef, Location>> names;
      if (parseLetNames(names))
        return failure();
      Location callAt = loc();
      SmallVector<Value> values;
      if (tok.isKeyword("window_copy") && peek().is(Token::LParen)) {
        consume();
        consume();
        SmallVector<std::pair<StringRef, Location>> path;
        do {
          Location partLoc = loc();
          StringRef part;
          if (parseIdent(part, "<actor>.<window>.<field>"))
            return failure();
          path.push_back({part, partLoc});
        } while (consumeIf(Token::Dot));
        if (expect(Token::RParen, "to close window_copy"))
          return failure();
        FailureOr<std::pair<SymbolRefAttr, Type>> field =
            resolveWindowField(path);
        if (failed(field))
          return failure();
        auto actor = cast<l1::ActorOp>(SymbolTable::lookupSymbolIn(
            moduleOf(builder), path[0].first));
        auto op = l1::WindowCopyOp::create(
            builder, callAt,
            l1::BufType::get(ctx, actor.getNodeAttr(),
                             cast<RankedTensorType>(field->second)),
            field->first, FlatSymbolRefAttr::get(ctx, path[2].first));
        values.push_back(op.getResult());
      } else if (tok.is(Token::Identifier) && peek().is(Token::LParen)) {
        StringRef callee = tok.spelling;
        consume();
        SmallVector<L1Arg, 4> args;
        if (parseL1Args(args, callee))
          return failure();
        FailureOr<SmallVector<Value>> results =
            buildStageCall(callee, callAt, args);
        if (failed(results))
          return failure();
        values = *results;
      } else {
        FailureOr<Value> v = parseExpr();
        if (failed(v))
          return failure();
        values.push_back(*v);
      }
      if (values.size() != names.size())
        return emitError(names.front().second, "'let' binds ")
               << names.size() << " name" << (names.size() == 1 ? "" : "s")
               << " to " << values.size() << " value"
               << (values.size() == 1 ? "" : "s");
      for (auto [n, v] : llvm::zip(names, values))
        bind(n.first, v);
      continue;
    }
    if (word == "if") {
      // (+1: the condition is an expression one level further in.)
      if (nestingDepth + 1 >= kMaxDomainDepth)
        return error("'if' nested more than " + llvm::Twine(kMaxDomainDepth) +
                     " levels deep");
      NestingGuard nested(nestingDepth);
      consume();
      FailureOr<Value> cond = parseExpr();
      if (failed(cond))
        return failure();
      if (!cond->getType().isInteger(1))
        return emitError(at, "the condition of 'if' is a flag (batch_full(x)), "
                             "got ")
               << cond->getType();
      Region *region = current->getParent();
      Block *thenBlock = new Block(), *elseBlock = new Block();
      region->push_back(thenBlock);
      region->push_back(elseBlock);
      cf::CondBranchOp::create(builder, at, *cond, thenBlock, elseBlock);
      Location thenOpen = loc();
      if (expect(Token::LBrace, "to open the 'if' branch"))
        return failure();
      scopes.emplace_back();
      FailureOr<Block *> thenEnd = parseStageStatements(thenBlock, thenOpen);
      scopes.pop_back();
      if (failed(thenEnd))
        return failure();
      consume(); // '}'
      Block *elseEnd = elseBlock;
      if (!tok.isKeyword("else")) {
        // Without `else`, the false edge goes straight to the join.
        if (*thenEnd) {
          OpBuilder::InsertionGuard g(builder);
          builder.setInsertionPointToEnd(*thenEnd);
          cf::BranchOp::create(builder, at, elseBlock);
        }
        current = elseBlock;
        builder.setInsertionPointToEnd(current);
        continue;
      }
      consume();
      // `else if c { ... }` is `else { if c { ... } }`.
      bool elseIf = tok.isKeyword("if");
      Location elseOpen = loc();
      if (!elseIf && expect(Token::LBrace, "to open the 'else' branch"))
        return failure();
      scopes.emplace_back();
      FailureOr<Block *> e =
          parseStageStatements(elseBlock, elseOpen, /*once=*/elseIf);
      scopes.pop_back();
      if (failed(e))
        return failure();
      if (!elseIf)
        consume(); // '}'
      elseEnd = *e;
      // Open branches join after the `if`; values made in a branch stay in it.
      current = nullptr;
      if (*thenEnd || elseEnd) {
        current = new Block();
        region->push_back(current);
        for (Block *open : {*thenEnd, elseEnd})
          if (open) {
            OpBuilder::InsertionGuard g(builder);
            builder.setInsertionPointToEnd(open);
            cf::BranchOp::create(builder, at, current);
          }
      }
      if (current)
        builder.setInsertionPointToEnd(current);
      continue;
    }
    if (word == "end") {
      consume();
      if (consumeIf(Token::LParen) && expect(Token::RParen, "after 'end('"))
        return failure();
      l1::EndOp::create(builder, at);
      current = nullptr;
      continue;
    }
    static constexpr StringRef kStatements[] = {"report", "drop", "send",
                                                "forward"};
    static constexpr StringRef kValueOps[] = {"read_batch", "transfer",
                                              "batch_full", "window_copy"};
    if (!llvm::is_contained(kStatements, word)) {
      if (llvm::is_contained(kValueOps, word))
        return emitError(at, "'")
               << word << "' gives a value: bind it with 'let x = " << word
               << "(...)', or write a statement (report, drop, send, forward, "
               << "end)";
      return error("unknown stage statement '" + word +
                   "'; expected let, if, report, drop, send, forward or end");
    }
    consume();
    if (expect(Token::LParen, ("after '" + word + "'").str()))
      return failure();
    // The target of send/forward is a name, not a value.
    SymbolRefAttr target;
    Location targetLoc = loc();
    if (word == "send" || word == "forward") {
      if (parseRef(target, targetLoc))
        return failure();
      if (word == "send" && target.getNestedReferences().size() != 1)
        return emitError(targetLoc, "send names <actor>.<Message>");
      if (word == "forward" && !target.getNestedReferences().empty())
        return emitError(targetLoc, "forward names a stage or tensor graph");
      if (!tok.is(Token::RParen) &&
          expect(Token::Comma, "after the target"))
        return failure();
    }
    SmallVector<L1Arg, 4> args;
    if (!tok.is(Token::RParen)) {
      do {
        args.emplace_back(loc());
        if (parseL1Arg(args.back()))
          return failure();
      } while (consumeIf(Token::Comma));
    }
    if (expect(Token::RParen, ("to close '" + word + "'").str()))
      return failure();
    SmallVector<Value> buffers;
    std::optional<std::string> metric;
    for (auto [i, arg] : llvm::enumerate(args)) {
      if (word == "report" && i == 0) {
        if (arg.kind != L1Arg::Str)
          return emitError(arg.loc, "report's first argument is the metric's "
                                    "name (a string)");
        metric = arg.tok.getStringValue();
        continue;
      }
      if (!arg.key.empty())
        return emitError(arg.keyLoc, "'") << word << "' takes no keywords";
      FailureOr<Value> v = argValue(arg);
      if (failed(v))
        return failure();
      if (!isa<l1::BufType>(v->getType()))
        return emitError(arg.loc, "'") << word << "' takes buffers, got "
                                       << v->getType();
      buffers.push_back(*v);
    }
    Operation *built = nullptr;
    if (word == "report") {
      if (!metric || buffers.size() != 1)
        return emitError(at, "report takes a metric name and one buffer: "
                             "report(\"loss\", loss)");
      built = l1::ReportOp::create(builder, at, builder.getStringAttr(*metric),
                                   buffers[0]);
    } else if (word == "drop") {
      // `drop(x, y)` frees each buffer in turn.
      if (buffers.empty())
        return emitError(at, "drop takes the buffers to free");
      for (Value b : buffers) {
        built = l1::DropOp::create(builder, at, b);
        if (failed(checkBuilt(built)))
          return failure();
      }
    } else if (word == "send") {
      built = l1::SendOp::create(builder, at, target, buffers);
    } else {
      built = l1::ForwardOp::create(
          builder, at, FlatSymbolRefAttr::get(ctx, target.getRootReference()),
          buffers);
      current = nullptr;
    }
    if (failed(checkBuilt(built)))
      return failure();
  }
  return current;
}

//===----------------------------------------------------------------------===//
// pipeline and schedule
//===----------------------------------------------------------------------===//

/// pipeline ::= 'pipeline' ident '{' ident { '->' ident } '}'
ParseResult Parser::parsePipeline() {
  StringRef name;
  Location nameLoc = loc(), open = loc();
  if (parseDeclarationHead("pipeline", name, nameLoc, open))
    return failure();
  SmallVector<Attribute> elements;
  do {
    if (tok.is(Token::Eof) || startsTopLevelForm(false))
      return unclosedBody("pipeline", name, open);
    StringRef element;
    if (parseIdent(element, "a stage or tensor graph in the pipeline"))
      return failure();
    elements.push_back(FlatSymbolRefAttr::get(ctx, element));
  } while (consumeIf(Token::Arrow));
  if (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false))
      return unclosedBody("pipeline", name, open);
    return expected("'->' or '}' in pipeline '" + name + "'");
  }
  consume();
  l1::PipelineOp::create(builder, nameLoc, builder.getStringAttr(name),
                         builder.getArrayAttr(elements));
  return success();
}

/// schedule ::= 'schedule' '{' { 'pipelines' ':' list | 'actors' ':' list
///                               | 'pipeline_depth' ':' int } '}'
ParseResult Parser::parseSchedule() {
  Location at = loc();
  consume(); // 'schedule'
  Location open = loc();
  if (expect(Token::LBrace, "to open the schedule"))
    return failure();
  SmallVector<Attribute> pipelines, actors;
  std::optional<int64_t> depth;
  llvm::StringSet<> seen;
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false))
      return unclosedBody("schedule", "", open);
    Location keyLoc = loc();
    StringRef key;
    if (parseIdent(key, "'pipelines', 'actors', 'pipeline_depth' or '}'"))
      return failure();
    if (!llvm::is_contained({"pipelines", "actors", "pipeline_depth"}, key))
      return emitError(keyLoc, "unknown schedule entry '")
             << key << "'; expected pipelines, actors or pipeline_depth";
    if (!seen.insert(key).second)
      return emitError(keyLoc, "duplicate '") << key << "' in the schedule";
    if (expect(Token::Colon, ("after '" + key + "'").str()))
      return failure();
    if (key == "pipeline_depth") {
      int64_t n;
      if (parsePositiveInt(n, "the pipeline depth"))
        return failure();
      depth = n;
    } else if (parseRefList(key == "pipelines" ? pipelines : actors,
                            /*flat=*/true, /*bracketed=*/true)) {
      return failure();
    }
    consumeIf(Token::Comma);
  }
  consume(); // '}'
  if (!seen.contains("pipelines"))
    return emitError(at, "the schedule has no 'pipelines:'");
  l1::ScheduleOp::create(builder, at, builder.getArrayAttr(pipelines),
                         builder.getArrayAttr(actors),
                         builder.getI64IntegerAttr(depth.value_or(1)));
  return success();
}

//===----------------------------------------------------------------------===//
// Value names in verifier diagnostics
//===----------------------------------------------------------------------===//

std::string Parser::renameValues(ModuleOp module, Location at,
                                 StringRef message) {
  if (synNames.empty() || !message.contains('%'))
    return message.str();
  // The op the diagnostic is about, and the stage, graph or handler whose
  // values its message names.
  Operation *scope = nullptr;
  module.walk([&](Operation *op) {
    if (op->getLoc() != at)
      return WalkResult::advance();
    scope = op->hasTrait<OpTrait::IsIsolatedFromAbove>()
                ? op
                : op->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
    return WalkResult::interrupt();
  });
  if (!isa_and_nonnull<l1::StageOp, l1::TensorGraphOp, l1::HandlerOp>(scope))
    return message.str();
  // The verifiers print a value with printAsOperand; so does this.
  llvm::StringMap<std::string> printed;
  auto note = [&](Value v) {
    auto it = synNames.find(v);
    if (it == synNames.end())
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    v.printAsOperand(os, OpPrintingFlags().assumeVerified());
    if (text != "%" + it->second)
      printed[text] = "'" + it->second + "'";
  };
  scope->walk([&](Block *block) {
    for (BlockArgument arg : block->getArguments())
      note(arg);
    for (Operation &op : *block)
      for (Value r : op.getResults())
        note(r);
  });
  std::string out;
  for (size_t i = 0; i < message.size();) {
    if (message[i] == '%') {
      size_t j = i + 1;
      while (j < message.size() &&
             (llvm::isAlnum(message[j]) || message[j] == '_'))
        ++j;
      auto it = printed.find(message.substr(i, j - i));
      if (it != printed.end()) {
        out += it->second;
        i = j;
        continue;
      }
    }
    out += message[i++];
  }
  return out;
}
