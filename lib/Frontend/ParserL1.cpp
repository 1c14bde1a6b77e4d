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
// This file holds what the forms share (nodes, types, reference lists,
// values, names and calls), the system and the data binding; the tensor
// ops are ParserL1Tensor.cpp's, actors and tensor graphs
// ParserL1Actors.cpp's, stages, pipelines and the schedule
// ParserL1Stages.cpp's.
//
// Grammar: docs/syn.md.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "ParserUtil.h"

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
using namespace synpl::syn::detail;
namespace sh = synpl::shapes;

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
                         << "' has " << listWords(known);
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
             << key << "'; expected " << listWords(kKeys);
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

/// edges ::= 'edges' '{' { ident ('->' | '<->') ident ':' 'bandwidth' rate
///                         [ 'latency' duration ] } '}'
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
    StringAttr latency;
    if (tok.isKeyword("latency")) {
      consume();
      if (!tok.is(Token::Suffixed))
        return expected("a duration like 2us after 'latency'");
      if (!parseDuration(tok.spelling))
        return error("latency is a duration like 2us, 500ns or 1ms, got '" +
                     tok.spelling + "'");
      latency = builder.getStringAttr(tok.spelling);
      consume();
    }
    ends.push_back({from, fromLoc});
    ends.push_back({to, toLoc});
    l1::EdgeOp::create(builder, fromLoc, FlatSymbolRefAttr::get(ctx, from),
                       FlatSymbolRefAttr::get(ctx, to),
                       both ? builder.getUnitAttr() : UnitAttr(),
                       builder.getStringAttr(rate), latency);
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

ModuleOp synpl::syn::detail::moduleOf(OpBuilder &builder) {
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

double synpl::syn::detail::numberValue(const Parser::L1Arg &arg) {
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
