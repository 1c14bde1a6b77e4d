//===- ParserL1Stages.cpp - stage, pipeline, schedule ---------------------===//
//
// The stage (its `fn process` with `forward` / `send` / `drop` statements
// and its control flow), the pipeline and the schedule forms.
//
//===----------------------------------------------------------------------===//
#include "Parser.h"
#include "ParserUtil.h"

#include "synpl/Analysis/Shapes.h"
#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Dialect/L3/L3Ops.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace synpl;
using namespace synpl::syn;
using namespace synpl::syn::detail;
namespace sh = synpl::shapes;

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
  } else if (name == "all_reduce") {
    // `let a, b = all_reduce(mean, x, y)`: how, then the bucket's buffers.
    if (args.size() < 2)
      return emitError(at, "'all_reduce' takes how to combine (sum, mean, max "
                           "or min) and at least one buffer");
    for (L1Arg &arg : args)
      if (!arg.key.empty())
        return emitError(arg.loc, "'all_reduce' takes positional arguments");
    FailureOr<StringRef> how = word(&args[0], "sum, mean, max or min");
    if (failed(how))
      return failure();
    std::optional<l1::ReduceKind> kind = l1::symbolizeReduceKind(*how);
    if (!kind)
      return emitError(args[0].loc, "unknown reduction '")
             << *how << "'; expected sum, mean, max or min";
    SmallVector<Value> buffers;
    for (L1Arg &arg : llvm::drop_begin(args)) {
      FailureOr<Value> x = buffer(&arg);
      if (failed(x))
        return failure();
      buffers.push_back(*x);
    }
    built = l1::AllReduceOp::create(builder, at, *kind, buffers);
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
    static constexpr StringRef kValues[] = {"read_batch", "transfer", "all_reduce",
                                            "batch_full", "window_copy"};
    static constexpr StringRef kStatements[] = {"report", "drop", "send",
                                                "forward", "end"};
    if (llvm::is_contained(kStatements, name))
      return emitError(at, "'") << name << "' is a statement; it gives no value";
    return emitError(at, "unknown stage operation '")
           << name << "'; expected " << listWords(kValues) << " (values) or "
           << listWords(kStatements) << " (statements)";
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
    static constexpr StringRef kValueOps[] = {"read_batch", "transfer", "all_reduce",
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
///                               | 'pipeline_depth' ':' int
///                               | 'replicas' ':' list | 'shards' ':' list } '}'
ParseResult Parser::parseSchedule() {
  Location at = loc();
  consume(); // 'schedule'
  Location open = loc();
  if (expect(Token::LBrace, "to open the schedule"))
    return failure();
  SmallVector<Attribute> pipelines, actors, replicas, shards;
  std::optional<int64_t> depth;
  llvm::StringSet<> seen;
  while (!tok.is(Token::RBrace)) {
    if (tok.is(Token::Eof) || startsTopLevelForm(false))
      return unclosedBody("schedule", "", open);
    Location keyLoc = loc();
    StringRef key;
    if (parseIdent(key, "'pipelines', 'actors', 'pipeline_depth', 'replicas', 'shards' or '}'"))
      return failure();
    if (!llvm::is_contained({"pipelines", "actors", "pipeline_depth", "replicas", "shards"}, key))
      return emitError(keyLoc, "unknown schedule entry '")
             << key << "'; expected pipelines, actors, pipeline_depth, replicas or shards";
    if (!seen.insert(key).second)
      return emitError(keyLoc, "duplicate '") << key << "' in the schedule";
    if (expect(Token::Colon, ("after '" + key + "'").str()))
      return failure();
    if (key == "pipeline_depth") {
      int64_t n;
      if (parsePositiveInt(n, "the pipeline depth"))
        return failure();
      depth = n;
    } else if (parseRefList(key == "pipelines" ? pipelines
                            : key == "actors"  ? actors
                            : key == "shards"  ? shards
                                               : replicas,
                            /*flat=*/true, /*bracketed=*/true)) {
      return failure();
    }
    consumeIf(Token::Comma);
  }
  consume(); // '}'
  if (!seen.contains("pipelines"))
    return emitError(at, "the schedule has no 'pipelines:'");
  auto schedule = l1::ScheduleOp::create(builder, at, builder.getArrayAttr(pipelines),
                                         builder.getArrayAttr(actors),
                                         builder.getI64IntegerAttr(depth.value_or(1)));
  if (seen.contains("replicas"))
    schedule.setReplicasAttr(builder.getArrayAttr(replicas));
  if (seen.contains("shards"))
    schedule.setShardsAttr(builder.getArrayAttr(shards));
  return success();
}
