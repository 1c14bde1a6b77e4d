//===- Parser.h - The .syn parser's state (internal) --------------*- C++ -*-===//
//
// The recursive-descent parser of the .syn surface syntax. Its members are
// defined in Parser.cpp (L3 forms, `methods for`, verification) and
// ParserL1.cpp (the L1 placement forms).
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_LIB_FRONTEND_PARSER_H
#define SYNPL_LIB_FRONTEND_PARSER_H

#include "Lexer.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SourceMgr.h"

#include <optional>
#include <string>
#include <vector>

namespace synpl::syn {

using namespace mlir;


/// A reference as written and where: `mnist.images` at 10:10.
struct RefUse {
  SymbolRefAttr ref;
  Location loc;
};

struct SynArg;

/// An argument value inside `methods for`: read generically first (the
/// forms nest: `schedule(..., inner: adam(lr: 3e-4))`), then interpreted
/// against the method or layer that takes it, so every error can name what
/// the callee knows.
struct SynValue {
  enum Kind { Int, Real, Word, Str, Call, List, Record } kind = Word;
  Token tok;  ///< the first token (the name of a call or word)
  Location loc;
  Location close; ///< the closing ')' or ']' (where a missing argument goes)
  std::vector<SynArg> args;    ///< Call arguments, Record fields
  std::vector<SynValue> items; ///< List items
  SmallVector<Attribute> hints; ///< escape hatches written before a layer
  Location hintsLoc;            ///< the first of them
  explicit SynValue(Location l) : loc(l), close(l), hintsLoc(l) {}
};

/// `key: value` or a positional `value` (empty key).
struct SynArg {
  StringRef key;
  Location keyLoc;
  SynValue value;
};

/// The three method families of `methods for`.
enum class Family { Sample, Backward, Update };

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
    if (tok.spelling == "methods")
      return peek().isKeyword("for");
    if (tok.spelling == "schedule")
      return peek().is(Token::LBrace);
    if (!llvm::is_contained({"data", "model", "loss", "system", "actor",
                             "stage", "tensor_graph", "pipeline"},
                            tok.spelling))
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
  /// The head every L3 declaration shares: `<keyword> name {`, the keyword
  /// being the current token. Gives the name, its location and the `{`'s.
  ParseResult parseDeclarationHead(StringRef keyword, StringRef &name,
                                   Location &nameLoc, Location &open) {
    consume(); // the keyword
    nameLoc = loc();
    if (parseIdent(name, "a name after '" + keyword + "'"))
      return failure();
    open = loc();
    return expect(Token::LBrace,
                  "to open the " + keyword + " declaration's body");
  }
  /// The body every L3 declaration shares: entries until `}`, escape
  /// hatches anywhere among them (into `hints`), an unclosed body reported
  /// at its `{`. `entry` parses one entry; `close` gets the `}`'s location.
  ParseResult parseDeclarationBody(StringRef kind, StringRef name, Location open,
                                   bool goalIsEntry,
                                   SmallVectorImpl<Attribute> &hints,
                                   llvm::function_ref<ParseResult()> entry,
                                   Location *close = nullptr) {
    while (!tok.is(Token::RBrace)) {
      if (tok.is(Token::Eof) || startsTopLevelForm(goalIsEntry))
        return unclosedBody(kind, name, open);
      if (tok.is(Token::HashLSquare)) {
        if (parseHatch(hints))
          return failure();
        continue;
      }
      if (entry())
        return failure();
    }
    if (close)
      *close = loc();
    consume(); // '}'
    return success();
  }
  ParseResult parseData(ArrayAttr hints);
  ParseResult parseModel(ArrayAttr hints);
  ParseResult parseLoss(ArrayAttr hints);
  ParseResult parseGoal();
  ParseResult parseHatch(SmallVectorImpl<Attribute> &hints);
  ParseResult parseHatches(SmallVectorImpl<Attribute> &hints);

  ParseResult parseDomain(Type &domain);
  ParseResult parseDtype(Type &dtype);
  /// The dtype a name spells (f16, bf16, f32, f64, bool, iN, uN with N in
  /// 1, 8, 16, 32, 64), or null; `index` is L3's own.
  static Type namedDtype(MLIRContext *ctx, StringRef s);
  ParseResult parsePositiveInt(int64_t &value, const llvm::Twine &what);
  ParseResult parseReal(double &value, const llvm::Twine &what);
  ParseResult parseRef(SymbolRefAttr &ref, Location &refLoc);
  ParseResult parseProperty(SmallVectorImpl<Attribute> &constraints);
  ParseResult parseTerm(StringRef name, Location nameLoc);
  ParseResult parseTermWeight(double &weight);

  //===--- methods for (L2) ----------------------------------------------===//
  ParseResult parseMethods();
  ParseResult parseValue(SynValue &value);
  ParseResult parseArgs(SynValue &call, Token::Kind close);
  FailureOr<Attribute> buildMethod(const SynValue &call, Family family);
  ParseResult bindArgs(const SynValue &call, ArrayRef<StringRef> params,
                       SmallVectorImpl<const SynValue *> &slots);
  ParseResult need(const SynValue &call, const SynValue *arg, StringRef param);
  FailureOr<int64_t> intArg(const SynValue *v, StringRef param);
  FailureOr<double> realArg(const SynValue *v, StringRef param);
  FailureOr<bool> boolArg(const SynValue *v, StringRef param);
  FailureOr<StringRef> wordArg(const SynValue *v, StringRef param,
                               ArrayRef<StringRef> known);
  FailureOr<Value> buildLayers(const std::vector<SynValue> &layers, Value x);
  FailureOr<Value> buildLayer(const SynValue &layer, Value x);
  FailureOr<Value> finishLayer(Operation *op);
  FailureOr<Value> buildSubDag(Region &region, Type input,
                               const SynValue &body);
  FailureOr<Value> buildRegionLayer(const SynValue &layer, Value x);
  /// How many layers of each labelled kind were built (`fc1`, `norm2`).
  llvm::StringMap<unsigned> layerCounts;
  unsigned valueDepth = 0;
  /// Where each `methods for` block wrote its methods, so that an l2
  /// verifier error located at the block moves onto what it is about:
  /// L2.5 onto the sample method, L2.3 onto the backward method (or the
  /// checkpoint it names), L2.4 onto the update method.
  struct MethodsUse {
    Location sample, backward, update;
    SmallVector<std::pair<std::string, Location>> checkpoints;
    SmallVector<std::pair<std::string, Location>> overrides;
  };
  llvm::DenseMap<Location, MethodsUse> methodsUses;
  /// The checkpoints and parameter overrides of the block being parsed.
  SmallVector<std::pair<std::string, Location>> checkpointUses, overrideUses;
  std::optional<Location> methodsLocFor(Location opLoc, StringRef message);

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

  //===--- L1 placement forms (ParserL1.cpp) ------------------------------===//
public:
  /// An argument of an L1 call (`tensor_reduce_sum(a, axis: 1)`,
  /// `read_batch(d, [x, y], batch: 128, into: ram_0)`), read before the
  /// callee interprets it: a bare word may be a value name or a keyword
  /// (a dtype, a predicate, a node), a number an operand or an attribute.
  struct L1Arg {
    enum Kind { Val, Number, Word, List, Str } kind = Word;
    StringRef key;          ///< empty when positional
    Location keyLoc, loc;
    Value value;            ///< Val
    Token tok;              ///< Number (with sign folded into `negative`), Word, Str
    bool negative = false;  ///< Number: written with a leading '-'
    SmallVector<Token, 4> items; ///< List: the words or integers
    L1Arg(Location l) : keyLoc(l), loc(l) {}
  };

private:
  ParseResult parseSystem();
  ParseResult parseNode(llvm::StringMap<Location> &nodeLocs);
  ParseResult parseEdges(SmallVectorImpl<std::pair<StringRef, Location>> &ends);
  ParseResult parseActor();
  ParseResult parseStage();
  ParseResult parseTensorGraph();
  ParseResult parsePipeline();
  ParseResult parseSchedule();
  /// `@ ssd_0, path: "...", format: idx` after a data field's domain.
  ParseResult parseDataBinding(Operation *field);
  /// A program with L1 placement forms and no L3 model is an L1 program:
  /// its data declarations become l1.data sources.
  LogicalResult finishL1Program(ModuleOp module);

  /// `on <node>`: a node of the system declared above.
  ParseResult parseOnNode(FlatSymbolRefAttr &node, StringRef what);
  /// The head actor, stage and tensor_graph share: `<keyword> name on <node>
  /// {`, the keyword being the current token; `what` names the form in
  /// messages. Gives the name, its location, the node and the `{`'s location.
  ParseResult parsePlacedHead(StringRef keyword, StringRef what,
                              StringRef &name, Location &nameLoc,
                              FlatSymbolRefAttr &node, Location &open);
  /// `fn <fn>` (`fn` being the current token): the function a stage or a
  /// tensor graph (`what`) holds.
  ParseResult parseFnName(StringRef fn, StringRef what);
  ParseResult checkNode(StringRef name, Location at);
  /// tensor(dt, [..]) or scalar(dt), as a static ranked tensor type.
  ParseResult parseTensorType(RankedTensorType &type);
  /// buf<node, tensor(...)> or a tensor type.
  ParseResult parseValueType(Type &type, bool buffers);
  /// `name: type, ...` inside parentheses, as block arguments.
  ParseResult parseTypedArgs(Block &block, bool buffers);
  /// `a.b` or `[a.b, c.d]` or `a.b, c.d` (until a non-comma).
  ParseResult parseRefList(SmallVectorImpl<Attribute> &refs, bool flat,
                           bool bracketed);
  /// `callee`'s arguments; a word in a tensor operand position is resolved
  /// at once, so that reads happen in source order.
  ParseResult parseL1Args(SmallVectorImpl<L1Arg> &args, StringRef callee);
  ParseResult parseL1Arg(L1Arg &arg);

  /// Bodies: the value scopes and what a bare name may mean.
  enum class BodyKind { Handler, Graph, Stage };
  BodyKind bodyKind = BodyKind::Graph;
  /// Enters a stage's or tensor graph's body: fresh scopes, `kind`, its
  /// `reads`, then its arguments (`name: type, ...`) into `entry`.
  ParseResult beginFunctionBody(Block &entry, BodyKind kind,
                                ArrayRef<Attribute> reads, bool buffers);
  Operation *currentActor = nullptr;          ///< Handler: its actor
  SmallVector<SymbolRefAttr> currentReads;    ///< Graph/Stage: reads windows
  std::vector<llvm::StringMap<Value>> scopes;
  /// How deeply the L1 expression or `if` being parsed is nested.
  unsigned nestingDepth = 0;
  void bind(StringRef name, Value v) {
    scopes.back()[name] = v;
    synNames.try_emplace(v, name.str());
  }
  /// The .syn name each value was first bound to (`y`, `unused`).
  llvm::DenseMap<Value, std::string> synNames;
  /// Rewrites the SSA names (`%arg1`, `%0`) an l1 verifier's `message`
  /// prints for values of the stage, graph or handler holding the op at
  /// `at` into the names the .syn text gave them (`'y'`).
  std::string renameValues(ModuleOp module, Location at, StringRef message);
  Value lookupLocal(StringRef name);
  /// A value written by name: a local, else (handler) a state field read,
  /// else (graph) a field of a window in `reads`.
  FailureOr<Value> resolveName(StringRef name, Location at);
  /// `actor.window.field`: a window read (graph) or its field type.
  FailureOr<std::pair<SymbolRefAttr, Type>>
  resolveWindowField(ArrayRef<std::pair<StringRef, Location>> path);
  FailureOr<Value> parseExpr();
  FailureOr<Value> argValue(L1Arg &arg, Type eltHint = Type());
  FailureOr<Value> buildTensorCall(StringRef name, Location at,
                                   SmallVectorImpl<L1Arg> &args);
  FailureOr<SmallVector<Value>> buildStageCall(StringRef name, Location at,
                                               SmallVectorImpl<L1Arg> &args);
  /// Runs `op`'s own verifier now, so that a shape error is reported at
  /// the `let` that wrote it.
  LogicalResult checkBuilt(Operation *op);
  ParseResult parseHandlerBody(Location open);
  ParseResult parseGraphBody(Location open,
                             ArrayRef<std::pair<StringRef, Location>> outputs);
  /// Statements of a stage until '}' into `block`; gives the block the
  /// path continues in (null once a terminator ended it).
  /// With `once`, parses one statement (the `if` of an `else if`).
  FailureOr<Block *> parseStageStatements(Block *block, Location open,
                                          bool once = false);
  ParseResult parseLetNames(SmallVectorImpl<std::pair<StringRef, Location>> &names);
  /// `let x = expr` (`let` being the current token) in a handler or a tensor
  /// graph, where a tensor op gives one value.
  ParseResult parseSingleLet();

  /// The program's system (nodes are checked against it) and its name's
  /// location (for notes).
  Operation *systemOp = nullptr;
  Location systemLoc = UnknownLoc::get(ctx);
  /// The data declarations, which become l1.data in an L1 program.
  SmallVector<Operation *> dataDecls;
  bool sawL1Placement = false;
};

} // namespace synpl::syn

#endif // SYNPL_LIB_FRONTEND_PARSER_H
