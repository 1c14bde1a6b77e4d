// The generic (UOp) codelet in the ipu21 program file: a round trip keeps
// every member (version 2); version 1 files still read; a corrupt body or
// vertex is refused with one line naming the codelet or vertex; random
// damage to a UOp program never crashes the reader or the simulator.
#include "IPU21UOpBuilder.h"

#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

using namespace ipu21test;

namespace {

/// A body using every kind of UOp, on 2 parallel slots and 2 fields. Its
/// UOps: 0-3 constants, 4 range j (slot 1), 5 range i (slot 0), 6 index,
/// 7 load, 8 cmplt, 9 if, 10 exp2, 11 log2, 12 sin, 13 neg, 14 sqrt,
/// 15 reciprocal, 16 mulacc, 17 where, 18 cast, 19 bitcast, 20 div, 21 mod,
/// 22 max, 23 cmpne, 24 cast, 25 add, 26 index, 27 mul, 28 store, 29 endif,
/// 30 end i, 31 cast, 32 end j, 33 reduce.
UOpBody everyUOp() {
  UOpBody k("every \xE2\x9C\x93");
  int32_t x = k.field("x", ElemType::F16, {4, 3});
  int32_t y = k.field("y", ElemType::I32, {4}, true);
  int32_t zero = k.constF(0, UType::F16), nan = k.constF(-std::nan("7"), UType::F16);
  int32_t izero = k.constI(0, UType::I32), minus = k.constI(-5, UType::I32);
  int32_t j = k.range(0, 3, 1, 2);
  int32_t i = k.range(0, 4, 0);
  int32_t ix = k.index(x, {i, j});
  int32_t v = k.load(x, ix, UType::F16);
  int32_t lt = k.convert(UOpcode::CmpLt, UType::I1, UType::F16, zero, v);
  k.if_(lt);
  int32_t e = k.compute(UOpcode::Exp2, UType::F16, v);
  int32_t l = k.compute(UOpcode::Log2, UType::F16, e);
  int32_t s = k.compute(UOpcode::Sin, UType::F16, l);
  int32_t q = k.compute(UOpcode::Sqrt, UType::F16, k.compute(UOpcode::Neg, UType::F16, s));
  int32_t r = k.compute(UOpcode::Reciprocal, UType::F16, q);
  int32_t m = k.compute(UOpcode::MulAcc, UType::F16, r, v, nan);
  int32_t w = k.compute(UOpcode::Where, UType::F16, lt, m, zero);
  int32_t c = k.convert(UOpcode::Cast, UType::F32, UType::F16, w);
  int32_t b = k.convert(UOpcode::Bitcast, UType::I32, UType::F32, c);
  int32_t d = k.compute(UOpcode::Div, UType::I32, b, minus);
  int32_t mo = k.compute(UOpcode::Mod, UType::I32, d, minus);
  int32_t mx = k.compute(UOpcode::Max, UType::I32, mo, izero);
  int32_t ne = k.convert(UOpcode::CmpNe, UType::I1, UType::I32, mx, izero);
  int32_t sum = k.compute(UOpcode::Add, UType::I32, mx, k.convert(UOpcode::Cast, UType::I32,
                                                                  UType::I1, ne));
  int32_t iy = k.index(y, {i}), sq = k.compute(UOpcode::Mul, UType::I32, sum, sum);
  k.store(y, iy, sq, UType::I32);
  k.endIf();
  k.end(i);
  int32_t jv = k.convert(UOpcode::Cast, UType::I32, UType::Index, j);
  k.end(j);
  k.reduce(2, UType::I32, jv, j, izero);
  return k;
}

/// One vertex of everyUOp on tile 0.
Program uopProgram() {
  Program p = makeProgram("uop");
  int32_t x = addTensor(p, "x", ElemType::F16, {4, 3}, 0, 12, 0x80000);
  int32_t y = addBuffer(p, "y", ElemType::I32, tiles(0, 2), 8, 0x90000);
  int32_t k = addUOpCodelet(p, everyUOp());
  addCodelet(p, "fill", CodeletKind::Fill, ElemType::F32, ElemType::F32, 64, 0x4D000);
  p.main.body = {executeStep(addComputeSet(
      p, "cs",
      {vertex(k, tiles(0, 1), {tensorField(x, 0, 12), bufferField(y, 2, 4)},
              {0, 4, 0, 3, 0, 4, 0, 3, 0, 4})}))};
  return p;
}

uint64_t bitsOf(double v) {
  uint64_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

} // namespace

TEST_CASE("ipu21 program file: a UOp codelet round trip keeps every member") {
  Program p = uopProgram();
  std::string error;
  INFO(error);
  REQUIRE(checkProgram(p, error));
  std::string bytes = writeProgram(p);
  CHECK(bytes[8] == 2); // a UOp codelet needs version 2
  Program q;
  REQUIRE(readProgram(bytes.data(), bytes.size(), q, error));
  CHECK(writeProgram(q) == bytes);
  const Codelet &a = p.codelets[0], &b = q.codelets[0];
  CHECK(b.name == a.name);
  CHECK(b.kind == CodeletKind::UOp);
  REQUIRE(b.uopFields.size() == a.uopFields.size());
  for (size_t f = 0; f < a.uopFields.size(); ++f) {
    CHECK(b.uopFields[f].name == a.uopFields[f].name);
    CHECK(b.uopFields[f].type == a.uopFields[f].type);
    CHECK(b.uopFields[f].shape == a.uopFields[f].shape);
    CHECK(b.uopFields[f].output == a.uopFields[f].output);
  }
  REQUIRE(b.uop.size() == a.uop.size());
  for (size_t i = 0; i < a.uop.size(); ++i) {
    const UInst &u = a.uop[i], &v = b.uop[i];
    INFO("UOp " << i);
    CHECK(v.op == u.op);
    CHECK(v.type == u.type);
    CHECK(v.srcType == u.srcType);
    CHECK(v.a == u.a);
    CHECK(v.b == u.b);
    CHECK(v.c == u.c);
    CHECK(v.field == u.field);
    CHECK(v.indices == u.indices);
    CHECK(v.lo == u.lo);
    CHECK(v.hi == u.hi);
    CHECK(v.step == u.step);
    CHECK(v.par == u.par);
    CHECK(bitsOf(v.fimm) == bitsOf(u.fimm)); // a NaN's sign and payload too
    CHECK(v.iimm == u.iimm);
  }
  CHECK(q.codelets[1].uop.empty());
  CHECK(q.computeSets[0].vertices[0].params == p.computeSets[0].vertices[0].params);

  // And it runs: y[i] for the rows where x[i, j] > 0 on the last j.
  Simulator sim(q, ipu21Facts());
  REQUIRE(sim.valid(error));
  REQUIRE(sim.setTensor("x", {1, -1, 2, 0.5, 0.25, -3, 0, 0, 0, 7, 8, 9}, error));
  CHECK(sim.run(error));
}

TEST_CASE("ipu21 program file: version 3 carries a training program's host side") {
  Program p = uopProgram();
  p.hostTable = {1, 2, -3, int64_t(1) << 40};
  p.hostStrings = std::string("plan\0slot\0", 10);
  std::string v3 = writeProgram(p);
  CHECK(v3[8] == 3); // a host side: the newest version
  Program r;
  std::string error;
  REQUIRE(readProgram(v3.data(), v3.size(), r, error));
  CHECK(r.hostTable == p.hostTable);
  CHECK(r.hostStrings == p.hostStrings);
  CHECK(writeProgram(r) == v3);
  // Without a host side it is an older version; a version 3 file must have one.
  Program bare = uopProgram();
  std::string v2 = writeProgram(bare);
  CHECK(v2[8] == 2);
  std::string b = v2;
  b[8] = 3;
  CHECK(readError(b).find("the payload ends inside the host tables") == 0);
  // The host side's rules: both parts, the strings ending with a NUL.
  Program half = uopProgram();
  half.hostTable = {1};
  CHECK_FALSE(checkProgram(half, error));
  CHECK(error == "the host side needs its tables and its strings, which end with a NUL");
  half.hostStrings = "no terminator";
  CHECK_FALSE(checkProgram(half, error));
  half.hostStrings.push_back('\0');
  CHECK(checkProgram(half, error));
  // Every truncation of a version 3 file is refused, never read past.
  for (size_t n = 0; n < v3.size(); ++n)
    CHECK_FALSE(readError(v3.substr(0, n)).empty());
}

TEST_CASE("ipu21 program file: versions 1 and 2") {
  Program plain = makeProgram("plain");
  addCodelet(plain, "fill", CodeletKind::Fill, ElemType::F32, ElemType::F32);
  std::string v1 = writeProgram(plain);
  CHECK(v1[8] == 1); // no UOp codelet: version 1, as before UOps
  CHECK(readError(v1).empty());
  std::string b = v1;
  b[8] = 2;
  CHECK(readError(b) ==
        "a version 2 file holds no UOp codelet (such a program is written as version 1)");
  std::string v2 = writeProgram(uopProgram());
  b = v2;
  b[8] = 1;
  CHECK(readError(b) == "a codelet's kind: value 4 is not one of 0..3");
}

TEST_CASE("ipu21 program file: corrupt UOp bodies and vertices are refused") {
  Program p = uopProgram();
  const std::string prefix = "codelet 0 'every \?\?\?': ";
  REQUIRE(p.codelets[0].uop.size() == 34);
  REQUIRE(p.codelets[0].uop[28].op == UOpcode::Store);
  auto refusal = [&](const Program &q) {
    std::string e = readError(writeProgram(q));
    // The same rule holds for a program built in memory.
    std::string direct;
    CHECK_FALSE(checkProgram(q, direct));
    CHECK(direct == e);
    return e;
  };
  auto body = [&]() -> std::vector<UInst> & { return p.codelets[0].uop; };
  REQUIRE(readError(writeProgram(p)).empty());

  SECTION("a forward register reference") {
    body()[7].a = 8; // the load's offset names a later UOp
    CHECK(refusal(p) == prefix + "UOp 7 (load): a names UOp 8, not an earlier one (registers "
                                 "are SSA: defined before their use)");
  }
  SECTION("an operand of a UOp with no value") {
    body()[10].a = 9; // exp2 reads the If
    CHECK(refusal(p) == prefix + "UOp 10 (exp2): a names UOp 9 (if), which has no value");
  }
  SECTION("an End closing the wrong Range") {
    size_t endI = body().size() - 4, endJ = body().size() - 2;
    REQUIRE(body()[endI].op == UOpcode::End);
    REQUIRE(body()[endJ].op == UOpcode::End);
    body()[endI].a = 4; // closes j while i is the innermost open range
    CHECK(refusal(p) == prefix + "UOp " + std::to_string(endI) +
                            " (end): closes UOp 4, not the innermost open range (UOp 5)");
  }
  SECTION("an EndIf with no If open") {
    size_t endIf = body().size() - 5;
    REQUIRE(body()[endIf].op == UOpcode::EndIf);
    std::swap(body()[endIf], body()[endIf + 1]); // End i before EndIf
    CHECK(refusal(p) == prefix + "UOp 29 (end): no open range to close (the innermost open "
                                 "scope is UOp 9, if)");
  }
  SECTION("a scope never closed") {
    body().resize(body().size() - 3);
    CHECK(refusal(p) == prefix + "UOp 4 (range) is never closed by an end");
  }
  SECTION("a bad field index") {
    body()[6].field = 2;
    CHECK(refusal(p) == prefix + "UOp 6 (index): field 2 does not exist (the codelet has 2)");
  }
  SECTION("an Index with the wrong number of indices") {
    body()[6].indices = {5};
    CHECK(refusal(p) == prefix + "UOp 6 (index): 1 indices for field 'x' of rank 2");
  }
  SECTION("a Reduce whose range is still open") {
    // Move the reduce before the End of its range.
    UInst reduce = body().back();
    body().pop_back();
    body().insert(body().end() - 1, reduce);
    CHECK(refusal(p) == prefix + "UOp 32 (reduce): its range (UOp 4) is still open");
  }
  SECTION("a Reduce folding a value of a closed inner scope") {
    body().back().a = 7; // the load inside range i, closed before the reduce
    CHECK(refusal(p) == prefix + "UOp 33 (reduce): a names UOp 7, not a value the body of its "
                                 "range (UOp 4) defines in every iteration");
  }
  SECTION("a Reduce whose initial value follows its range") {
    body().back().c = 5;
    CHECK(refusal(p).find("c names UOp 5, not one defined before its range (UOp 4)") !=
          std::string::npos);
  }
  SECTION("a use of a register outside its scope") {
    body().back().a = 5; // the loop value of range i, after its End
    CHECK(refusal(p).find("(reduce): a names UOp 5") != std::string::npos);
    body().back().a = 31;
    body()[31].a = 10; // the Cast after End i reads the exp2 in the If
    CHECK(refusal(p) == prefix + "UOp 31 (cast): a names UOp 10, defined in the scope of UOp "
                                 "9, which is closed here");
  }
  SECTION("types") {
    body()[10].type = UType::I32; // exp2 in i32
    CHECK(refusal(p) == prefix + "UOp 10 (exp2): computes in i32, not a float type");
    body()[10].type = UType::F16;
    body()[19].srcType = UType::F16; // bitcast f16 -> i32
    CHECK(refusal(p) == prefix + "UOp 19 (bitcast): reinterprets f16 as i32; only f32 <-> i32 "
                                 "are bitcasts");
    body()[19].srcType = UType::F32;
    body()[16].b = 2; // mulacc's b is an i32 register
    CHECK(refusal(p).find("UOp 16 (mulacc): b UOp 2 is i32, not f16") != std::string::npos);
  }
  SECTION("parallel slots") {
    body()[4].par = 0; // two ranges take slot 0, none slot 1
    CHECK(refusal(p) == prefix + "UOp 5 (range): parallel slot 0 is already UOp 4's");
    body()[4].par = 2;
    CHECK(refusal(p) == prefix + "parallel slot 1 has no range (the parallel ranges take slots "
                                 "0..2, each once)");
    body()[4].par = 1;
    body()[4].step = 0;
    CHECK(refusal(p) == prefix + "UOp 4 (range): step 0 is not positive");
  }
  SECTION("a store into an input field") {
    p.codelets[0].uopFields[1].output = false;
    CHECK(refusal(p).find("stores into field 'y', which is not an output") != std::string::npos);
  }
  SECTION("field shapes") {
    p.codelets[0].uopFields[0].shape = {4, 0};
    CHECK(refusal(p) == prefix + "field 0 'x': dimension 0 is not positive");
  }
  SECTION("enums out of range") {
    body()[3].op = UOpcode(26);
    std::string error;
    CHECK_FALSE(checkProgram(p, error));
    CHECK(error == prefix + "UOp 3 (?): opcode 26 is not one of 0..25");
    CHECK(readError(writeProgram(p)) == "a UOp's opcode: value 26 is not one of 0..25");
    body()[3].op = UOpcode::Const;
    body()[3].type = UType(10);
    CHECK(readError(writeProgram(p)) == "a UOp's type: value 10 is not one of 0..9");
  }
  SECTION("vertex params") {
    Vertex &v = p.computeSets[0].vertices[0];
    const std::string at = "compute set 0 'cs' vertex 0";
    v.params.pop_back();
    CHECK(refusal(p) == at + ": codelet 'every \?\?\?' takes 2 fields and 10 params, not 2 and 9");
    v.params = {0, 5, 0, 3, 0, 4, 0, 3, 0, 4};
    CHECK(refusal(p) ==
          at + ": parallel slot 0 takes [0, 5), not a range within its UOp 5's [0, 4)");
    v.params = {2, 1, 0, 3, 0, 4, 0, 3, 0, 4};
    CHECK(refusal(p).find("parallel slot 0 takes [2, 1)") != std::string::npos);
    v.params = {0, 4, 0, 3, 1, 4, 0, 3, 0, 4};
    CHECK(refusal(p) == at + " field 0 'x': the window [1, 1 + 4) of dimension 0 is not within "
                             "its 4 indices");
    v.params = {0, 4, 0, 3, 0, 4, -1, 3, 0, 4};
    CHECK(refusal(p).find("the window [-1, -1 + 3) of dimension 1") != std::string::npos);
    v.params = {0, 4, 0, 3, 0, 2, 0, 3, 0, 4};
    CHECK(refusal(p) == at + " field 0 'x': 12 elements; the params say 6");
    v.params = {0, 4, 0, 3, 0, 4, 0, 3, 0, 4};
    p.tensors[0].type = ElemType::F32;
    CHECK(refusal(p) == at + " field 0 'x': tensor 0 'x' is f32; the codelet needs f16");
  }
}

TEST_CASE("ipu21 program file: random damage to a UOp program never crashes") {
  std::string bytes = writeProgram(uopProgram());
  std::mt19937 rng(77);
  int accepted = 0, ran = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string b = bytes;
    damagePayload(b, rng, 3);
    setU64(b, 16, b.size() - kProgramHeaderBytes);
    fixChecksum(b);
    Program out;
    std::string error;
    if (!readProgram(b.data(), b.size(), out, error)) {
      CHECK(!error.empty());
      CHECK(error.find('\n') == std::string::npos);
      continue;
    }
    ++accepted;
    SimOptions options;
    options.maxBytes = int64_t(64) << 20;
    options.maxUOpSteps = 100000;
    Simulator sim(out, ipu21Facts(), options);
    if (!sim.valid(error))
      continue;
    std::vector<double> x(12);
    for (size_t k = 0; k < x.size(); ++k)
      x[k] = double(int(rng() % 17) - 8) / 2;
    (void)sim.setTensor("x", x, error);
    ran += sim.run(error);
  }
  CHECK(accepted > 0);
  CHECK(ran > 0);
}
