//===- ParserL1Actors.cpp - actor and tensor_graph ------------------------===//
//
// The actor (state, windows, handlers and their `let` statements) and the
// tensor graph (reads, `fn compute`, its `let` body and return) forms.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "ParserUtil.h"

#include "synpl/Analysis/Shapes.h"
#include "synpl/Dialect/L1/L1Ops.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::syn;
using namespace synpl::syn::detail;
namespace sh = synpl::shapes;

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
        if (parseIdent(init, "an initializer (zeros, ones, kaiming, xavier, planned_steps, "
                             "training_mode or rank)"))
          return failure();
        std::optional<l1::InitKind> kind = l1::symbolizeInitKind(init);
        if (!kind)
          return emitError(initLoc, "unknown initializer '")
                 << init
                 << "'; expected zeros, ones, kaiming, xavier, planned_steps, training_mode or "
                    "rank";
        // `, shard: A`: the field holds this rank's block along axis A
        // (tensor parallelism).
        IntegerAttr shard;
        if (tok.is(Token::Comma) && peek().isKeyword("shard")) {
          consume();
          consume();
          if (expect(Token::Colon, "after 'shard'"))
            return failure();
          int64_t axis;
          if (!tok.is(Token::Integer) || tok.spelling.getAsInteger(10, axis) || axis < 0)
            return expected("the shard's axis (a non-negative integer)");
          consume();
          shard = builder.getI64IntegerAttr(axis);
        }
        l1::StateOp::create(builder, fieldLoc, builder.getStringAttr(field),
                            TypeAttr::get(type),
                            l1::InitKindAttr::get(ctx, *kind), shard);
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
