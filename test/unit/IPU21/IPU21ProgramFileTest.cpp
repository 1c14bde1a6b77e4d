// The ipu21 program file: a round trip keeps every field; a corrupt,
// truncated, mis-versioned or semantically broken file is refused with one
// line; random damage never crashes the reader or the simulator.
#include "IPU21Builder.h"

#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <random>
#include <string>
#include <unistd.h>

using namespace ipu21test;

namespace {

/// A program using every kind of object, codelet, endpoint and step.
Program richProgram() {
  Program p = makeProgram("rich \xE2\x9C\x93");
  Tensor t;
  t.name = "x";
  t.type = ElemType::F16;
  t.shape = {4, 8};
  t.mapping = {{0, 0, 8}, {0, 24, 32}, {1, 8, 24}};
  t.address = 0x80000;
  p.tensors.push_back(t);
  int32_t flag = addTensor(p, "flag", ElemType::I32, {1}, 2, 1, 0x81000);
  int32_t small = addTensor(p, "small", ElemType::U8, {3}, 3, 3, 0x82000);
  int32_t f8 = addTensor(p, "f8", ElemType::F8E5M2, {16}, 3, 16, 0x83000);
  int32_t acc = addBuffer(p, "acc", ElemType::F32, TileSet{{{0, 2}, {5, 7}}}, 16, 0x90000);
  int32_t half = addBuffer(p, "half", ElemType::F16, tiles(0, 2), 16, 0x91000);
  int32_t amp = addCodelet(p, "amp", CodeletKind::AmpMatmul, ElemType::F16, ElemType::F32, 900);
  int32_t red = addCodelet(p, "reduce", CodeletKind::ReduceAdd, ElemType::F32, ElemType::F32, 300,
                           0x4D000);
  int32_t cp = addCodelet(p, "copy", CodeletKind::Copy, ElemType::F32, ElemType::F16, 200, 0x4E000);
  int32_t fill = addCodelet(p, "fill", CodeletKind::Fill, ElemType::U8, ElemType::U8, 100, 0x4F000);
  int32_t mm = addComputeSet(
      p, "mm",
      {vertex(amp, tiles(0, 1),
              {tensorField(0, 0, 4), tensorField(0, 4, 12), bufferField(acc, 0, 3)}, {1, 3, 4, 1}),
       vertex(red, tiles(0, 2), {bufferField(acc, 0, 6), bufferField(acc, 6, 3)}, {2, 3, 0}),
       vertex(cp, tiles(0, 2), {bufferField(acc, 0, 16), bufferField(half, 0, 16)}, {16})});
  int32_t init = addComputeSet(p, "init", {vertex(fill, tiles(3, 4), {tensorField(small, 0, 3)},
                                                  fillParams(3, 7.0))});
  int32_t x = addExchange(p, "spread",
                          {{tensorEnd(0, 4), bufferEnd(half, 2, tiles(0, 2)), 10},
                           {bufferEnd(half, 0, tileList({1})), tensorEnd(0, 20), 4}});
  Step loop = repeatStep(3, {executeStep(mm), syncStep()});
  p.main.body = {streamStep(StepKind::StreamIn, f8, "feed"), executeStep(init), copyStep(x),
                 ifStep(flag, {loop}, {syncStep(), streamStep(StepKind::StreamOut, 0, "drain")})};
  scheduled(p);
  return p;
}

/// The payload offsets at which the files of two programs differ.
std::vector<size_t> differences(const Program &a, const Program &b) {
  std::string x = writeProgram(a), y = writeProgram(b);
  REQUIRE(x.size() == y.size());
  std::vector<size_t> at;
  for (size_t i = kProgramHeaderBytes; i < x.size(); ++i)
    if (x[i] != y[i])
      at.push_back(i);
  return at;
}

} // namespace

TEST_CASE("ipu21 program file round trip") {
  Program p = richProgram();
  std::string error;
  INFO(error);
  REQUIRE(checkProgram(p, error));
  std::string bytes = writeProgram(p);
  CHECK(bytes.compare(0, 8, "SYNIPU21") == 0);
  Program q;
  REQUIRE(readProgram(bytes.data(), bytes.size(), q, error));
  CHECK(writeProgram(q) == bytes);
  CHECK(q.name == p.name);
  CHECK(q.target.arch == "ipu21");
  CHECK(q.target.tiles == 1472);
  CHECK(q.target.clockHz == p.target.clockHz);
  CHECK(q.target.sramEnd == 0xE8000);
  REQUIRE(q.tensors.size() == p.tensors.size());
  CHECK(q.tensors[0].shape == p.tensors[0].shape);
  CHECK(q.tensors[0].mapping[1].begin == 24);
  CHECK(q.tensors[3].type == ElemType::F8E5M2);
  CHECK(q.buffers[0].tiles.ranges == p.buffers[0].tiles.ranges);
  CHECK(q.codelets[3].kind == CodeletKind::Fill);
  CHECK(q.computeSets[0].vertices[2].params == std::vector<int64_t>{16});
  CHECK(q.computeSets[1].vertices[0].params == p.computeSets[1].vertices[0].params);
  CHECK(q.exchanges[0].sends[1].src.tiles.ranges == p.exchanges[0].sends[1].src.tiles.ranges);
  REQUIRE(q.main.body.size() == 4);
  CHECK(q.main.body[3].kind == StepKind::If);
  CHECK(q.main.body[3].body[0].count == 3);
  CHECK(q.main.body[3].elseBody[1].stream == "drain");

  SECTION("through a file") {
    std::string path = "/tmp/synpl-ipu21-test-" + std::to_string(getpid()) + ".prog";
    REQUIRE(saveProgram(path, p, error));
    Program r;
    REQUIRE(loadProgram(path, r, error));
    CHECK(writeProgram(r) == bytes);
    std::remove(path.c_str());
    CHECK_FALSE(loadProgram(path, r, error));
    CHECK(error.find("cannot read") != std::string::npos);
  }
}

TEST_CASE("ipu21 program file: header, checksum and truncation") {
  std::string bytes = writeProgram(richProgram());
  SECTION("magic") {
    std::string b = bytes;
    b[0] = 'X';
    CHECK(readError(b) == "not an ipu21 program file (no \"SYNIPU21\" magic)");
    CHECK(readError("") == "not an ipu21 program file (no \"SYNIPU21\" magic)");
  }
  SECTION("an unknown version") {
    std::string b = bytes;
    CHECK(b[8] == 4); // an exchange (its schedule): the oldest version that holds it
    b[8] = 5;
    CHECK(readError(b) == "program format version 5; this simulator reads versions 1 to 4");
    b[8] = 0;
    CHECK(readError(b) == "program format version 0; this simulator reads versions 1 to 4");
  }
  SECTION("a corrupted byte") {
    std::string b = bytes;
    b[bytes.size() / 2] ^= 0x40;
    CHECK(readError(b).find("checksum mismatch") != std::string::npos);
  }
  SECTION("every truncation") {
    for (size_t n = 0; n < bytes.size(); ++n)
      CHECK_FALSE(readError(bytes.substr(0, n)).empty());
    CHECK(readError(bytes.substr(0, 20)).find("truncated") != std::string::npos);
    CHECK(readError(bytes.substr(0, bytes.size() - 1)).find("truncated") != std::string::npos);
    CHECK(readError(bytes + "x").find("after its payload") != std::string::npos);
  }
  SECTION("a payload that ends early, with a matching header") {
    std::string b = bytes.substr(0, bytes.size() - 5);
    setU64(b, 16, b.size() - kProgramHeaderBytes);
    fixChecksum(b);
    // The last bytes are the exchange's rounds: their count no longer fits.
    CHECK(readError(b).find("an exchange's rounds: a count of") != std::string::npos);
    b = bytes.substr(0, bytes.size() - 2);
    setU64(b, 16, b.size() - kProgramHeaderBytes);
    fixChecksum(b);
    CHECK(readError(b).find("an exchange's rounds") != std::string::npos);
  }
}

TEST_CASE("ipu21 program file: semantic checks behind a valid checksum") {
  Program p = richProgram();
  std::string bytes = writeProgram(p);

  SECTION("a bad codelet index") {
    Program q = p;
    q.computeSets[0].vertices[1].codelet = 0x7777;
    std::vector<size_t> at = differences(p, q);
    REQUIRE(!at.empty());
    std::string b = bytes;
    b[at[0]] = char(99); // codelet 1 becomes codelet 99 (little-endian low byte)
    CHECK(readError(b).find("checksum") != std::string::npos);
    fixChecksum(b);
    CHECK(readError(b) ==
          "compute set 0 'mm' vertex 1: codelet 99 does not exist (the program has 4)");
  }
  SECTION("a field range past its object") {
    Program q = p;
    q.computeSets[0].vertices[0].fields[1].offset = 5; // [5, 17) on tile 0, which holds 16
    CHECK(readError(writeProgram(q)) ==
          "compute set 0 'mm' vertex 0 field 1: tile-local elements [5, 17) pass the 16 elements "
          "of tensor 0 'x' on tile 0");
    q = p;
    q.computeSets[0].vertices[1].fields[0].offset = 11; // acc holds 16 per tile
    CHECK(readError(writeProgram(q)).find("pass the 16 elements of buffer 0 'acc'") !=
          std::string::npos);
    q = p;
    q.computeSets[0].vertices[1].tiles = tiles(0, 3); // acc is not on tile 2
    CHECK(readError(writeProgram(q)).find("is not on every tile of the vertex") !=
          std::string::npos);
    q = p;
    q.computeSets[0].vertices[0].tiles = tiles(0, 3); // x has no elements on tile 2
    CHECK(readError(writeProgram(q)).find("has no elements on tile 2") != std::string::npos);
  }
  SECTION("intervals, tile sets, sends and types") {
    Program q = p;
    q.tensors[0].mapping[2].end = 33;
    CHECK(readError(writeProgram(q)).find("not a range of its 32 elements") != std::string::npos);
    q = p;
    q.tensors[0].mapping[0].tile = 1472;
    CHECK(readError(writeProgram(q)).find("the target has 1472 tiles") != std::string::npos);
    q = p;
    q.tensors[0].mapping[2].begin = 6; // elements 6, 7 on two tiles
    CHECK(readError(writeProgram(q)).find("lives on two tiles") != std::string::npos);
    q = p;
    q.tensors[0].mapping.pop_back();
    CHECK(readError(writeProgram(q)).find("live on no tile") != std::string::npos);
    q = p;
    q.buffers[0].tiles = TileSet{{{5, 7}, {0, 2}}};
    CHECK(readError(writeProgram(q)).find("not sorted and disjoint") != std::string::npos);
    q = p;
    q.exchanges[0].sends[1].src.tiles = tiles(0, 2);
    CHECK(readError(writeProgram(q)).find("source buffer names exactly one tile") !=
          std::string::npos);
    q = p;
    q.exchanges[0].sends[0].dst.object = 0; // f32 acc from f16 x
    CHECK(readError(writeProgram(q)).find("sends f16 into f32") != std::string::npos);
    q = p;
    q.exchanges[0].sends[0].count = 30; // x holds 32 elements from 4
    CHECK(readError(writeProgram(q)).find("pass the 32 elements of tensor 0 'x'") !=
          std::string::npos);
    q = p;
    q.exchanges[0].sends[0].count = 0; // an empty send (its rows would be free)
    CHECK(readError(writeProgram(q)).find("moves no elements") != std::string::npos);
    q = p;
    q.exchanges[0].sends[0].rows = 3; // 3 rows of 8 / 3 elements
    CHECK(readError(writeProgram(q)).find("do not make 3 whole rows") != std::string::npos);
    q = p;
    q.exchanges[0].sends[0].rows = 2; // 2 rows of 4, 30 apart: past x's 32
    q.exchanges[0].sends[0].rowStride = 30;
    CHECK(readError(writeProgram(q)).find("of tensor 0 'x'") != std::string::npos);
    q = p;
    q.computeSets[0].vertices[0].fields[2].object = 1; // half, not f32 acc
    CHECK(readError(writeProgram(q)).find("is f16; the codelet needs f32") != std::string::npos);
    q = p;
    q.tensors[1].shape = {int64_t(1) << 30, int64_t(1) << 30};
    CHECK(readError(writeProgram(q)).find("more than 2^40 elements") != std::string::npos);
  }
  SECTION("enum values and counts") {
    Program q = p;
    q.tensors[2].type = ElemType::I32;
    std::vector<size_t> at = differences(p, q);
    REQUIRE(at.size() == 1);
    std::string b = bytes;
    b[at[0]] = char(9);
    fixChecksum(b);
    CHECK(readError(b) == "a tensor: value 9 is not one of 0..5");
    // The tensors' count (right after the name, the arch and 10 target fields).
    size_t countAt = kProgramHeaderBytes + 4 + p.name.size() + 4 + p.target.arch.size() + 80;
    b = bytes;
    setU64(b, countAt, uint64_t(1) << 60);
    fixChecksum(b);
    CHECK(readError(b).find("the tensors: a count of 1152921504606846976 items cannot fit") !=
          std::string::npos);
  }
  SECTION("steps nest at most 64 deep") {
    auto nested = [&](int depth) {
      Program q = makeProgram("deep");
      Step *s = &q.main;
      for (int d = 1; d < depth; ++d) {
        s->body.push_back(repeatStep(1, {}));
        s = &s->body.back();
      }
      return q;
    };
    CHECK(readError(writeProgram(nested(64))).empty());
    CHECK(readError(writeProgram(nested(65))) == "steps nest deeper than 64");
    std::string error;
    CHECK_FALSE(checkProgram(nested(65), error));
    CHECK(error.find("nest deeper than 64") != std::string::npos);
  }
  SECTION("step references") {
    Program q = p;
    q.main.body[1].ref = 5;
    CHECK(readError(writeProgram(q)) == "step main/1 (execute): compute set 5 does not exist");
    q = p;
    q.main.body[3].elseBody[1].stream.clear();
    CHECK(readError(writeProgram(q)) == "step main/3/else/1 (stream-out): the stream has no name");
    q = p;
    q.main.kind = StepKind::Repeat;
    CHECK(readError(writeProgram(q)) == "main is a repeat, not a sequence");
  }
}

TEST_CASE("ipu21 program file: random damage never crashes") {
  std::string bytes = writeProgram(richProgram());
  std::mt19937 rng(2024);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string b = bytes;
    damagePayload(b, rng, 4);
    if (rng() % 8 == 0)
      b.resize(kProgramHeaderBytes + rng() % (b.size() - kProgramHeaderBytes));
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
    // A program the reader accepts is one the simulator can index.
    SimOptions options;
    options.values = false;
    options.maxBytes = int64_t(64) << 20;
    Simulator sim(out, ipu21Facts(), options);
    if (sim.valid(error))
      (void)sim.memoryMap(0);
  }
  CHECK(accepted > 0); // names, addresses and sizes change without breaking a rule
}
