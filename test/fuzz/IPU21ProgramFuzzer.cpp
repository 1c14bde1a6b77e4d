//===- IPU21ProgramFuzzer.cpp - The ipu21 program file and simulator ------===//
//
// Each input is an ipu21 program file (synpl/Target/IPU21/ProgramFile.h;
// make_seeds.py makes the seeds with `synpl-translate
// --synpl-ipu21-to-program`). The harness reads it twice: once as it is,
// so that the header's checks and the checksum are covered, and once with
// the header's payload size and checksum rewritten to match the bytes
// behind them, so that the fuzzer explores the payload instead of stopping
// at the checksum (nearly every mutation breaks it) or at the size (every
// mutation that inserts or erases bytes breaks it). The reader must check
// every field behind the checksum all the same.
//
// A program the reader accepts must write back to exactly the bytes it was
// read from. It is then handed to the simulator with a small memory budget
// (64 MiB: a fuzz run must not run out of memory) and, when the simulator
// accepts it, its report is formatted as text and as JSON, tile 0's memory
// map is listed and main is run once, with a stream source and sink and
// with values in the small tensors. Running is skipped for programs whose
// run would take too long to fuzz (see runCost).
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/IPU21/Facts.h"
#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace synpl::ipu21;
using namespace synpl::ipu21::sim;

namespace {

/// What one run of main costs, roughly: the steps it executes and the
/// elements those steps read, compute on or write.
struct Cost {
  double steps = 0, elements = 0;
};

/// Above either limit, main is not run: a file of a few hundred bytes can
/// nest Repeat steps whose counts multiply to far more steps than a fuzz
/// input may take (and each Execute may touch millions of elements), and
/// libFuzzer would report every such program as a slow input. The reader
/// and the simulator's constructor still see these programs; only running
/// them is skipped. A tensor or buffer that no step touches costs nothing
/// here: its size is bounded by the simulator's memory budget instead.
constexpr double kMaxSteps = 1e5, kMaxElements = 4e6;
/// The elements the harness itself sets and reads back, over all tensors.
constexpr double kMaxSetElements = 65536;

/// The elements one Execute of each compute set touches: every field of
/// every vertex on every tile of the vertex, and a matrix product's
/// m × n × k multiply-adds; plus one per vertex and tile, which costs
/// something even when its fields are empty.
std::vector<double> computeSetElements(const Program &p) {
  std::vector<double> out;
  for (const ComputeSet &cs : p.computeSets) {
    double n = 0;
    for (const Vertex &v : cs.vertices) {
      double perTile = 1;
      for (const FieldRef &f : v.fields)
        perTile += double(f.count);
      if (p.codelets[v.codelet].kind == CodeletKind::AmpMatmul)
        perTile += double(v.params[0]) * double(v.params[1]) * double(v.params[2]);
      n += perTile * double(v.tiles.count());
    }
    out.push_back(n);
  }
  return out;
}

/// The elements one Copy of each exchange moves: each send's elements once
/// read and once written on every destination tile; plus one per send and
/// per row it reads. (An exchange whose sends advance with their Repeat's
/// runs is costed again on every run, which takes time in the same rows and
/// destination tiles.)
std::vector<double> exchangeElements(const Program &p) {
  std::vector<double> out;
  for (const Exchange &x : p.exchanges) {
    double n = 0;
    for (const Send &s : x.sends) {
      double tiles = s.dst.isTensor ? 1 : double(s.dst.tiles.count());
      n += 1 + double(s.rows) + double(s.count) * (1 + tiles);
    }
    out.push_back(n);
  }
  return out;
}

/// An upper bound on the cost of running step `s` once (the program has
/// passed checkProgram, so every ref names an object). A Repeat multiplies
/// its body's cost by its count; an If costs its dearer branch. Doubles
/// cannot overflow: a huge product becomes infinity, which compares above
/// the limits.
Cost runCost(const Program &p, const Step &s, const std::vector<double> &csElements,
             const std::vector<double> &xElements, const std::vector<double> &numel) {
  Cost c{1, 0};
  auto sum = [&](const std::vector<Step> &body) {
    Cost b;
    for (const Step &child : body) {
      Cost k = runCost(p, child, csElements, xElements, numel);
      b.steps += k.steps;
      b.elements += k.elements;
    }
    return b;
  };
  switch (s.kind) {
  case StepKind::Sequence: {
    Cost b = sum(s.body);
    c.steps += b.steps;
    c.elements += b.elements;
    break;
  }
  case StepKind::Repeat:
    // The simulator runs an empty body zero times; a count of 0 runs nothing
    // (and must not multiply an infinite body into a NaN).
    if (s.count > 0 && !s.body.empty()) {
      Cost b = sum(s.body);
      c.steps += double(s.count) * b.steps;
      c.elements += double(s.count) * b.elements;
    }
    break;
  case StepKind::If: {
    Cost then = sum(s.body), otherwise = sum(s.elseBody);
    c.steps += std::max(then.steps, otherwise.steps);
    c.elements += std::max(then.elements, otherwise.elements);
    break;
  }
  case StepKind::Execute:
    c.elements = csElements[s.ref];
    break;
  case StepKind::Copy:
    c.elements = xElements[s.ref];
    break;
  case StepKind::StreamIn:
  case StepKind::StreamOut:
    c.elements = numel[s.ref];
    break;
  case StepKind::Sync:
    break;
  }
  return c;
}

double elementsOf(const Tensor &t) {
  double n = 1;
  for (int64_t d : t.shape)
    n *= double(d);
  return n;
}

/// The element count of the tensor each stream's first StreamIn fills: the
/// stream source gives that many values (a stream that feeds tensors of
/// different sizes then also exercises the simulator's count check). That
/// StreamIn may be one that never runs (in a Repeat of count 0), so that
/// runCost did not bound its tensor: past kMaxElements the source gives one
/// value, which the simulator refuses.
void streamSizes(const Step &s, const Program &p, std::map<std::string, size_t> &sizes) {
  if (s.kind == StepKind::StreamIn) {
    double n = elementsOf(p.tensors[s.ref]);
    sizes.emplace(s.stream, n <= kMaxElements ? size_t(n) : 1);
  }
  for (const Step &b : s.body)
    streamSizes(b, p, sizes);
  for (const Step &b : s.elseBody)
    streamSizes(b, p, sizes);
}

/// Values the stream source and the tensors are filled with: ordinary
/// numbers, ones no element type holds exactly, out-of-range ones and
/// non-finite ones, so that every conversion's edges are reached.
double value(size_t i) {
  static const double pattern[] = {1.5,  -2.25, 0.1,    65504, 1e6,
                                   -0.0, 448.5, 1e-40, 3e9,   -7,
                                   std::numeric_limits<double>::infinity(),
                                   std::numeric_limits<double>::quiet_NaN()};
  return pattern[i % (sizeof(pattern) / sizeof(pattern[0]))];
}

void simulate(const Program &program) {
  std::optional<Facts> facts = factsFor(program.target.arch);
  SimOptions options;
  options.values = true;
  options.maxBytes = int64_t(64) << 20;
  // A generic vertex's loops are the file's to choose: a hostile one would
  // run for the default 2^36 steps and read as a slow input, not a bug.
  options.maxUOpSteps = 100000;
  Simulator sim(program, facts ? *facts : ipu21Facts(), options);
  std::string error;
  if (!sim.valid(error))
    return;
  (void)sim.memoryMap(0);

  std::vector<double> numel;
  for (const Tensor &t : program.tensors)
    numel.push_back(elementsOf(t));
  Cost cost = runCost(program, program.main, computeSetElements(program),
                      exchangeElements(program), numel);
  if (cost.steps <= kMaxSteps && cost.elements <= kMaxElements) {
    // Values in the small tensors (up to kMaxSetElements in all), so that an
    // If can go either way and the codelets see more than zeroes.
    auto small = [&](size_t i) { return numel[i] <= kMaxSetElements; };
    double set = 0;
    for (size_t i = 0; i < program.tensors.size() && set <= kMaxSetElements; ++i) {
      if (!small(i))
        continue;
      set += 1 + numel[i];
      std::vector<double> values(static_cast<size_t>(numel[i]));
      for (size_t k = 0; k < values.size(); ++k)
        values[k] = value(i + k);
      (void)sim.setTensor(program.tensors[i].name, values, error);
    }
    std::map<std::string, size_t> sizes;
    streamSizes(program.main, program, sizes);
    // The source runs dry after 64 transfers, so that "no more data" is
    // reached too.
    int transfers = 0;
    sim.setStreamSource([&](std::string_view stream, std::vector<double> &out) {
      if (++transfers > 64)
        return false;
      auto it = sizes.find(std::string(stream));
      out.resize(it == sizes.end() ? 1 : it->second);
      for (size_t k = 0; k < out.size(); ++k)
        out[k] = value(size_t(transfers) + k);
      return true;
    });
    double streamed = 0;
    sim.setStreamSink([&](std::string_view, const std::vector<double> &values) {
      for (double v : values)
        streamed += v;
    });
    (void)sim.run(error);
    double got = 0;
    for (size_t i = 0; i < program.tensors.size() && got <= kMaxSetElements; ++i) {
      std::vector<double> values;
      if (small(i) && sim.getTensor(program.tensors[i].name, values, error))
        got += 1 + numel[i];
    }
  }
  (void)formatReport(sim.report(), program, false);
  (void)formatReport(sim.report(), program, true);
}

void check(const uint8_t *data, size_t size) {
  Program program;
  std::string error;
  if (!readProgram(data, size, program, error))
    return;
  // Every field the reader accepts is one the writer writes back as it was.
  if (writeProgram(program) != std::string_view(reinterpret_cast<const char *>(data), size))
    __builtin_trap();
  simulate(program);
}

void putLE(uint8_t *at, uint64_t v) {
  for (int i = 0; i < 8; ++i)
    at[i] = uint8_t(v >> (8 * i));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check(data, size);
  if (size < kProgramHeaderBytes)
    return 0;
  // The header: magic (8 bytes), version (4), reserved (4), payload bytes
  // (8, at 16) and the payload's checksum (8, at 24).
  std::vector<uint8_t> bytes(data, data + size);
  const size_t payload = size - kProgramHeaderBytes;
  putLE(bytes.data() + 16, payload);
  putLE(bytes.data() + 24, fnv1a64(bytes.data() + kProgramHeaderBytes, payload));
  // When the header already matched, the first read saw these same bytes.
  if (std::memcmp(bytes.data(), data, kProgramHeaderBytes) != 0)
    check(bytes.data(), bytes.size());
  return 0;
}
