//===- SynLexerTest.cpp - The .syn lexer and parser robustness ------------===//
//
// Token kinds, spellings and exact line:column positions of the .syn lexer;
// then the parser on every prefix and on byte-level corruptions of the spec's
// MNIST trace: it returns a module or null with a located error, never
// crashes.
//
//===----------------------------------------------------------------------===//
#include "../../lib/Frontend/Lexer.h"
#include "synpl/Frontend/Syn.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace synpl::syn;

namespace {

struct Lexed {
  Token::Kind kind;
  std::string spelling;
  unsigned line, col;
};

std::vector<Lexed> lexAll(llvm::StringRef text) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "t.syn"), llvm::SMLoc());
  Lexer lexer(sm, id);
  std::vector<Lexed> out;
  while (true) {
    Token tok = lexer.lex();
    auto [line, col] = sm.getLineAndColumn(tok.getLoc(), id);
    out.push_back({tok.kind, tok.spelling.str(), line, col});
    if (tok.is(Token::Eof) || out.size() > 1000)
      break;
  }
  return out;
}

const char *kTrace = R"(data mnist {
    images : tensor(f32, [28, 28])
    labels : tensor(u8, [1])
}

model classify {
    in:  mnist.images
    out: dist(10)
    properties: [depth(3), width(512), param_budget(500K)]
}

loss objective {
    ce:     divergence(classify.out, mnist.labels), weight: 1.0
    sparse: norm(classify.params, p=1),             weight: 1e-4
    combine: weighted_sum
}

goal: minimize(objective)
)";

/// The spec's "Trace — MNIST at L2", after the L3 trace.
const char *kL2Trace = R"(
methods for classify {
    sample:   epoch_shuffle(batch: 128)

    infer: sequential [
        linear(784, 256), norm(layer), gelu,
        linear(256, 256), norm(layer), gelu,
        linear(256, 10),  softmax
    ]

    backward: autodiff(mode: reverse)
    update:   schedule(warmup: 1000, decay: cosine,
                       inner: adam(lr: 3e-4))
}
)";

/// An L1 program: every L1 form (the spec's "Trace - MNIST at L1", with
/// its bodies written out).
const char *kL1Trace = R"(system single_gpu {
    node ssd_0  { kind: storage }
    node ram_0  { kind: memory, capacity: 32GB }
    node cpu_0  { kind: compute, isa: x86_64, cores: 8 }
    node gpu_0  { kind: compute, isa: cuda, vram: 24GB, sm: 84 }

    edges {
        ssd_0 -> ram_0  : bandwidth 2GB/s
        ram_0 <-> cpu_0 : bandwidth 50GB/s
        cpu_0 <-> gpu_0 : bandwidth 32GB/s
    }
}

data mnist {
    images : tensor(u8, [28, 28]) @ ssd_0, path: "/data/train-images.gz"
    labels : tensor(u8, [1])      @ ssd_0, path: "/data/train-labels.gz", format: idx
}

actor model_state on gpu_0 {
    state {
        w : tensor(f32, [784, 10]), init: kaiming
        b : tensor(f32, [10]),      init: zeros
    }

    window weights : (w, b)
        readers(forward_backward)

    on GradUpdate(gw: tensor(f32, [784, 10]), gb: tensor(f32, [10])) {
        let lr = 3e-4
        w = tensor_sub(w, tensor_scale(gw, lr))
        b = tensor_sub(b, tensor_scale(gb, lr))
    }
}

stage load_data on cpu_0 {
    fn process() -> forward(transfer_to_gpu, x, y) | drop(x) {
        let x, y = read_batch(mnist, [images, labels], batch: 128, order: shuffle, seed: 7, into: ram_0)
        if batch_full(x) {
            forward(transfer_to_gpu, x, y)
        } else {
            drop(x)
            drop(y)
        }
    }
}

stage transfer_to_gpu on cpu_0 {
    fn process(x: buf<ram_0, tensor(u8, [128, 28, 28])>, y: buf<ram_0, tensor(u8, [128, 1])>) {
        forward(forward_backward, transfer(x, gpu_0), transfer(y, gpu_0))
    }
}

tensor_graph forward_backward on gpu_0 {
    reads: model_state.weights
    then: transfer_grads
    fn compute(x: tensor(u8, [128, 28, 28]), y: tensor(u8, [128, 1])) -> (loss, gw, gb) {
        let xf = tensor_reshape(tensor_cast(x, f32), [128, 784])
        let t0 = tensor_matmul(xf, w)
        let t1 = tensor_add(t0, tensor_broadcast(b, [128, 10]))
        let oh = tensor_one_hot(tensor_reshape(y, [128]), 10)
        let d = tensor_sub(t1, oh)
        let loss = tensor_reduce_mean(d)
        let gw = tensor_matmul(tensor_transpose(xf), d)
        let gb = tensor_reduce_sum(d, axis: 0)
        return (loss, gw, gb)
    }
}

stage transfer_grads on cpu_0 {
    fn process(loss: buf<gpu_0, tensor(f32, [])>, gw: buf<gpu_0, tensor(f32, [784, 10])>, gb: buf<gpu_0, tensor(f32, [10])>) {
        report("loss", loss)
        drop(loss)
        send(model_state.GradUpdate, gw, gb)
    }
}

pipeline train { load_data -> transfer_to_gpu -> forward_backward }
pipeline grad_return { transfer_grads }

schedule {
    pipelines: [train, grad_return]
    actors: [model_state]
    pipeline_depth: 2
}
)";

/// Parses `text`; returns whether a module came back and whether every
/// error was located in the text. `errors` counts the errors.
std::pair<bool, bool> parseCounting(const std::string &text, unsigned &errors) {
  mlir::MLIRContext ctx;
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "t.syn"),
                        llvm::SMLoc());
  errors = 0;
  bool located = true;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error) {
      ++errors;
      located &= mlir::isa<mlir::FileLineColLoc>(diag.getLocation());
    }
    return mlir::success();
  });
  bool ok = static_cast<bool>(synpl::parseSyn(sm, &ctx));
  return std::make_pair(ok, located);
}

} // namespace

TEST_CASE("syn lexer: identifiers, punctuation and positions", "[syn]") {
  auto toks = lexAll("data mnist {\n    images : tensor(f32, [28, 28])\n}");
  std::vector<std::pair<Token::Kind, std::string>> expected = {
      {Token::Identifier, "data"},   {Token::Identifier, "mnist"},
      {Token::LBrace, "{"},          {Token::Identifier, "images"},
      {Token::Colon, ":"},           {Token::Identifier, "tensor"},
      {Token::LParen, "("},          {Token::Identifier, "f32"},
      {Token::Comma, ","},           {Token::LSquare, "["},
      {Token::Integer, "28"},        {Token::Comma, ","},
      {Token::Integer, "28"},        {Token::RSquare, "]"},
      {Token::RParen, ")"},          {Token::RBrace, "}"},
      {Token::Eof, ""}};
  REQUIRE(toks.size() == expected.size());
  for (size_t i = 0; i < toks.size(); ++i) {
    CHECK(toks[i].kind == expected[i].first);
    CHECK(toks[i].spelling == expected[i].second);
  }
  // images at 2:5, ':' at 2:12, the second 28 at 2:31, '}' at 3:1.
  CHECK(toks[3].line == 2);
  CHECK(toks[3].col == 5);
  CHECK(toks[4].col == 12);
  CHECK(toks[12].line == 2);
  CHECK(toks[12].col == 31);
  CHECK(toks[15].line == 3);
  CHECK(toks[15].col == 1);
}

TEST_CASE("syn lexer: numbers", "[syn]") {
  auto toks = lexAll("1e-4 1.0 784 500K 1.5M 5ms 2.5e+1 3E2");
  REQUIRE(toks.size() == 9);
  CHECK(toks[0].kind == Token::Float);
  CHECK(toks[0].spelling == "1e-4");
  CHECK(toks[1].kind == Token::Float);
  CHECK(toks[2].kind == Token::Integer);
  CHECK(toks[3].kind == Token::Suffixed);
  CHECK(toks[3].spelling == "500K");
  CHECK(toks[4].kind == Token::Suffixed);
  CHECK(toks[5].kind == Token::Suffixed);
  CHECK(toks[6].kind == Token::Float);
  CHECK(toks[6].spelling == "2.5e+1");
  CHECK(toks[7].kind == Token::Float);

  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy("1.5M 250us", "t.syn"),
      llvm::SMLoc());
  Lexer lexer(sm, id);
  Token count = lexer.lex();
  CHECK(count.getNumberPart() == "1.5");
  CHECK(count.getSuffix() == "M");
  Token time = lexer.lex();
  CHECK(time.getNumberPart() == "250");
  CHECK(time.getSuffix() == "us");
}

TEST_CASE("syn lexer: malformed numbers are error tokens", "[syn]") {
  for (const char *text : {"1e-", "1e+", "1.2.3", "2e"}) {
    auto toks = lexAll(text);
    INFO(text);
    REQUIRE(!toks.empty());
    CHECK(toks[0].kind == Token::Error);
    CHECK(toks[0].col == 1);
  }
}

TEST_CASE("syn lexer: strings, comments, hatches, comparisons", "[syn]") {
  auto toks = lexAll("// a comment\n#[l0::kernel(\"a\\\"b.ptx\")] <= >= == "
                     "!= < > = ? . :: // trailing\n");
  std::vector<Token::Kind> kinds = {
      Token::HashLSquare, Token::Identifier, Token::ColonColon,
      Token::Identifier,  Token::LParen,     Token::String,
      Token::RParen,      Token::RSquare,    Token::LessEqual,
      Token::GreaterEqual, Token::EqualEqual, Token::NotEqual,
      Token::Less,        Token::Greater,    Token::Equal,
      Token::Question,    Token::Dot,        Token::ColonColon,
      Token::Eof};
  REQUIRE(toks.size() == kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i)
    CHECK(toks[i].kind == kinds[i]);
  CHECK(toks[0].line == 2);
  CHECK(toks[0].col == 1);
  CHECK(toks[5].col == 14);

  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy("\"a\\\"b\"", "t.syn"),
      llvm::SMLoc());
  Lexer lexer(sm, id);
  CHECK(lexer.lex().getStringValue() == "a\"b");
}

TEST_CASE("syn lexer: bad input is located and never loops", "[syn]") {
  auto unterminated = lexAll("x \"abc\ny");
  REQUIRE(unterminated.size() >= 2);
  CHECK(unterminated[1].kind == Token::Error);
  CHECK(unterminated[1].col == 3);

  std::string bytes("a\0b\x01\xff\xc3\xa9 #x !", 12);
  auto toks = lexAll(bytes);
  CHECK(toks.back().kind == Token::Eof);
  CHECK(toks[1].kind == Token::Error); // NUL
  CHECK(toks[1].col == 2);
  CHECK(toks.size() < 20);
}

TEST_CASE("syn parser: the MNIST trace parses and verifies", "[syn]") {
  mlir::MLIRContext ctx;
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(kTrace, "t.syn"),
                        llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module = synpl::parseSyn(sm, &ctx);
  REQUIRE(module);
  CHECK(std::distance(module->getBody()->begin(), module->getBody()->end()) ==
        4);
}

TEST_CASE("syn parser: prefixes and corruptions fail with a located error",
          "[syn]") {
  std::string trace(kTrace);
  auto parse = parseCounting;
  // Every proper prefix that cuts a declaration short is an error; one that
  // ends between declarations is a valid (smaller) program.
  for (size_t n = 0; n < trace.size(); ++n) {
    unsigned errors;
    auto [ok, located] = parse(trace.substr(0, n), errors);
    INFO("prefix of " << n << " bytes");
    CHECK(located);
    CHECK(ok == (errors == 0));
  }
  // Replace each byte in turn with characters that break tokens.
  for (char bad : {'\0', '\xff', '{', ')', ':', '9', '#', '"'}) {
    for (size_t i = 0; i < trace.size(); i += 3) {
      std::string text = trace;
      text[i] = bad;
      unsigned errors;
      auto [ok, located] = parse(text, errors);
      INFO("byte " << i << " replaced");
      CHECK(located);
      CHECK(ok == (errors == 0));
    }
  }
}

TEST_CASE("syn parser: the MNIST L2 trace parses -- its prefixes and "
          "corruptions fail with a located error",
          "[syn]") {
  std::string l3(kTrace);
  std::string full = l3 + kL2Trace;
  unsigned errors;
  auto [ok, located] = parseCounting(full, errors);
  REQUIRE(ok);
  CHECK(errors == 0);
  // Cut the methods block short anywhere: an error (or, before 'methods',
  // the valid L3 program), never a crash.
  for (size_t n = l3.size(); n < full.size(); ++n) {
    auto [prefixOk, prefixLocated] = parseCounting(full.substr(0, n), errors);
    INFO("prefix of " << n << " bytes");
    CHECK(prefixLocated);
    CHECK(prefixOk == (errors == 0));
  }
  for (char bad : {'\0', '[', ')', ':', '9', '#', '"', ','}) {
    for (size_t i = l3.size(); i < full.size(); i += 2) {
      std::string text = full;
      text[i] = bad;
      auto [corruptOk, corruptLocated] = parseCounting(text, errors);
      INFO("byte " << i << " replaced by " << int(bad));
      CHECK(corruptLocated);
      CHECK(corruptOk == (errors == 0));
    }
  }
}

TEST_CASE("syn lexer: arrows, bindings, signs and rates", "[syn]") {
  auto toks = lexAll("a -> b <-> c @ ssd_0 | -0.5 - 2GB/s 50GB//note\n3e-4");
  std::vector<std::pair<Token::Kind, std::string>> expected = {
      {Token::Identifier, "a"},    {Token::Arrow, "->"},
      {Token::Identifier, "b"},    {Token::BiArrow, "<->"},
      {Token::Identifier, "c"},    {Token::At, "@"},
      {Token::Identifier, "ssd_0"}, {Token::Pipe, "|"},
      {Token::Minus, "-"},         {Token::Float, "0.5"},
      {Token::Minus, "-"},         {Token::Suffixed, "2GB/s"},
      {Token::Suffixed, "50GB"},   {Token::Float, "3e-4"},
      {Token::Eof, ""}};
  REQUIRE(toks.size() == expected.size());
  for (size_t i = 0; i < toks.size(); ++i) {
    INFO(i);
    CHECK(toks[i].kind == expected[i].first);
    CHECK(toks[i].spelling == expected[i].second);
  }
  CHECK(toks[3].col == 8);
  CHECK(toks[13].line == 2);
  // `<` `-` without `>` is less-than then minus; `<=` stays one token.
  auto less = lexAll("a <- b <= c");
  CHECK(less[1].kind == Token::Less);
  CHECK(less[2].kind == Token::Minus);
  CHECK(less[4].kind == Token::LessEqual);
}

TEST_CASE("syn parser: an L1 program parses and verifies -- its prefixes and "
          "corruptions fail with a located error",
          "[syn]") {
  std::string trace(kL1Trace);
  unsigned errors;
  auto [ok, located] = parseCounting(trace, errors);
  REQUIRE(ok);
  CHECK(errors == 0);
  for (size_t n = 0; n < trace.size(); n += 2) {
    auto [prefixOk, prefixLocated] = parseCounting(trace.substr(0, n), errors);
    INFO("prefix of " << n << " bytes");
    CHECK(prefixLocated);
    CHECK(prefixOk == (errors == 0));
  }
  for (char bad : {'\0', '{', '}', ')', ':', '9', '-', '@', ','}) {
    for (size_t i = 0; i < trace.size(); i += 5) {
      std::string text = trace;
      text[i] = bad;
      auto [corruptOk, corruptLocated] = parseCounting(text, errors);
      INFO("byte " << i << " replaced by " << int(bad));
      CHECK(corruptLocated);
      CHECK(corruptOk == (errors == 0));
    }
  }
}

TEST_CASE("syn parser: a system-only file is a module with just the system",
          "[syn]") {
  std::string text(kL1Trace);
  text = text.substr(0, text.find("data mnist"));
  mlir::MLIRContext ctx;
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "s.syn"),
                        llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module = synpl::parseSyn(sm, &ctx);
  REQUIRE(module);
  auto &ops = module->getBody()->getOperations();
  REQUIRE(ops.size() == 1);
  CHECK(ops.front().getName().getStringRef() == "l1.system");
}
