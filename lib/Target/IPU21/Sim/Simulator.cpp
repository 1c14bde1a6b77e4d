//===- Simulator.cpp - Running an ipu21 program, superstep by superstep ---===//
//
// The simulator checks the program (checkProgram), indexes it (tensor
// layouts, buffer rows, the objects on each tile), computes the cost of
// every compute set and exchange once (Cost.cpp) and allocates the values
// (zeroes) of every tensor and buffer. Running walks Program::main: an
// Execute runs each vertex on each tile of its set (Codelets.cpp), a Copy
// stages every send's source before writing any destination (the exchange
// is one superstep), and each step adds its cycles to its phase. A compute
// set with UOp vertices is charged after it ran, from the instructions its
// vertices' worker parts issued on each tile (each UOp vertex is a
// MultiVertex run by the tile's target.workers workers).
//
//===----------------------------------------------------------------------===//
#include "SimImpl.h"

#include "Codelets.h"
#include "Names.h"
#include "Numbers.h"

#include "synpl/Target/IPU21/ProgramFile.h"

#include <cstring>
#include <map>
#include <tuple>

namespace synpl::ipu21::sim {


namespace {

std::string quoted(std::string_view s) { return quoteName(s); }

/// Reads and writes the values of fields, tensors and buffers.
class Values {
public:
  explicit Values(Simulator::Impl &im) : im(im), p(im.program) {}

  /// Field `r`'s tile-local elements on `tile`, decoded.
  void read(const FieldRef &r, int64_t tile, std::vector<double> &out) const {
    out.resize(size_t(r.count));
    if (r.isTensor) {
      const Tensor &t = p.tensors[r.object];
      const uint8_t *data = im.tensorData[r.object].data();
      int64_t eb = elemBytes(t.type);
      auto run = [&](int64_t logical, int64_t len, int64_t pos) {
        for (int64_t j = 0; j < len; ++j)
          out[pos + j] = decodeElem(t.type, data + (logical + j) * eb);
      };
      im.layouts[r.object].forEachLocalRun(t, tile, r.offset, r.count, run);
      return;
    }
    const Buffer &b = p.buffers[r.object];
    int64_t eb = elemBytes(b.type);
    const uint8_t *row = im.bufferData[r.object].data() + rowOffset(r.object, tile);
    for (int64_t j = 0; j < r.count; ++j)
      out[j] = decodeElem(b.type, row + (r.offset + j) * eb);
  }

  /// Stores `in` into field `r` on `tile`, rounded to the field's type.
  void write(const FieldRef &r, int64_t tile, const std::vector<double> &in) {
    if (r.isTensor) {
      const Tensor &t = p.tensors[r.object];
      uint8_t *data = im.tensorData[r.object].data();
      int64_t eb = elemBytes(t.type);
      auto run = [&](int64_t logical, int64_t len, int64_t pos) {
        for (int64_t j = 0; j < len; ++j)
          encodeElem(t.type, in[pos + j], data + (logical + j) * eb);
      };
      im.layouts[r.object].forEachLocalRun(t, tile, r.offset, r.count, run);
      return;
    }
    const Buffer &b = p.buffers[r.object];
    int64_t eb = elemBytes(b.type);
    uint8_t *row = im.bufferData[r.object].data() + rowOffset(r.object, tile);
    for (int64_t j = 0; j < r.count; ++j)
      encodeElem(b.type, in[j], row + (r.offset + j) * eb);
  }

  /// Byte offset of `tile`'s row in buffer `b` (the tile is in its set).
  int64_t rowOffset(int32_t b, int64_t tile) const {
    const Buffer &buf = p.buffers[b];
    return im.bufferRanks[b].rank(buf.tiles, tile) * buf.elements * elemBytes(buf.type);
  }

  /// The raw bytes send `s` reads in run `run` of its Repeat: its rows one
  /// after another (a buffer source: one range on one tile).
  void stage(const Send &s, int64_t run, std::vector<uint8_t> &out) const {
    const Endpoint &e = s.src;
    int64_t count = s.count;
    if (e.isTensor) {
      int64_t eb = elemBytes(p.tensors[e.object].type);
      int64_t rows = std::max<int64_t>(s.rows, 1), rowLength = count / rows;
      const uint8_t *base = im.tensorData[e.object].data();
      out.resize(size_t(count * eb));
      for (int64_t r = 0; r < rows; ++r) {
        int64_t first = e.begin + s.advance * run + r * s.rowStride;
        std::memcpy(out.data() + r * rowLength * eb, base + first * eb, size_t(rowLength * eb));
      }
      return;
    }
    int64_t eb = elemBytes(p.buffers[e.object].type);
    const uint8_t *from = im.bufferData[e.object].data() +
                          rowOffset(e.object, e.tiles.ranges.front().first) + e.begin * eb;
    out.assign(from, from + count * eb);
  }

  /// Writes staged bytes to endpoint `e` (a destination: every tile named).
  void deliver(const Endpoint &e, const std::vector<uint8_t> &bytes) {
    if (bytes.empty())
      return;
    if (e.isTensor) {
      int64_t eb = elemBytes(p.tensors[e.object].type);
      std::memcpy(im.tensorData[e.object].data() + e.begin * eb, bytes.data(), bytes.size());
      return;
    }
    int64_t eb = elemBytes(p.buffers[e.object].type);
    sim::forEachTile(e.tiles, [&](int64_t t) {
      std::memcpy(im.bufferData[e.object].data() + rowOffset(e.object, t) + e.begin * eb,
                  bytes.data(), bytes.size());
    });
  }

private:
  Simulator::Impl &im;
  const Program &p;
};

/// The phase named `name` of `kind`, added on first use.
size_t phaseOf(Simulator::Impl &im, StepKind kind, const std::string &name) {
  auto key = std::make_pair(int(kind), name);
  auto it = im.phaseIndex.find(key);
  if (it != im.phaseIndex.end())
    return it->second;
  PhaseCost phase;
  phase.name = name;
  phase.kind = kind;
  im.report.phases.push_back(phase);
  im.busySum.push_back(0);
  im.phaseIndex.emplace(key, im.report.phases.size() - 1);
  return im.report.phases.size() - 1;
}

/// Adds a run of `cycles` to `phase`; `busy` tile-cycles of them (compute
/// sets) make its utilisation, busy over tiles × cycles across its runs.
void charge(Simulator::Impl &im, size_t phase, int64_t cycles, double busy = 0) {
  PhaseCost &pc = im.report.phases[phase];
  pc.runs += 1;
  pc.cycles = sim::satAdd(pc.cycles, cycles);
  im.busySum[phase] += busy;
  if (pc.cycles > 0 && im.busySum[phase] > 0)
    pc.utilisation = im.busySum[phase] / (double(im.program.target.tiles) * double(pc.cycles));
  im.report.totalCycles = sim::satAdd(im.report.totalCycles, cycles);
}

class Runner {
public:
  explicit Runner(Simulator::Impl &im) : im(im), p(im.program), values(im) {}

  bool step(const Step &s, std::string &error) {
    switch (s.kind) {
    case StepKind::Sequence:
      return body(s.body, error);
    case StepKind::Repeat: {
      int64_t outer = run;
      for (int64_t i = 0; i < s.count && !s.body.empty(); ++i) {
        run = i;
        if (!body(s.body, error))
          return false;
      }
      run = outer;
      return true;
    }
    case StepKind::Execute:
      return execute(s.ref, error);
    case StepKind::Copy:
      exchange(s.ref);
      return true;
    case StepKind::Sync:
      charge(im, phaseOf(im, StepKind::Sync, "sync"), im.facts.syncCycles);
      im.report.syncs += 1;
      return true;
    case StepKind::If: {
      if (!im.options.values) {
        error = "an If step tests tensor " + quoted(p.tensors[s.ref].name) +
                "; the simulator keeps no values (timing only)";
        return false;
      }
      const Tensor &t = p.tensors[s.ref];
      bool taken = decodeElem(t.type, im.tensorData[s.ref].data()) != 0;
      return body(taken ? s.body : s.elseBody, error);
    }
    case StepKind::StreamIn:
    case StepKind::StreamOut:
      return stream(s, error);
    }
    return true;
  }

private:
  Simulator::Impl &im;
  const Program &p;
  Values values;
  /// The run (from 0) of the innermost Repeat being executed; 0 outside.
  int64_t run = 0;

  bool body(const std::vector<Step> &steps, std::string &error) {
    for (const Step &s : steps)
      if (!step(s, error))
        return false;
    return true;
  }

  bool execute(int32_t ref, std::string &error) {
    const ComputeSet &cs = p.computeSets[ref];
    int64_t &phase = im.computeSetPhase[ref];
    if (phase < 0)
      phase = int64_t(phaseOf(im, StepKind::Execute, cs.name));
    // A compute set with UOp vertices is charged after its run, from the
    // instructions they issued (the constructor refused it without values).
    if (!im.computeSetHasUOp[ref])
      charge(im, size_t(phase), im.computeSetCosts[ref].cycles, im.computeSetCosts[ref].busy);
    if (!im.options.values)
      return true;
    std::vector<std::vector<double>> fields;
    // Per vertex, per tile (forEachTile order), each worker part's slots.
    std::vector<std::vector<std::vector<int64_t>>> issued;
    if (im.computeSetHasUOp[ref])
      issued.resize(cs.vertices.size());
    for (size_t vi = 0; vi < cs.vertices.size(); ++vi) {
      const Vertex &v = cs.vertices[vi];
      const Codelet &c = p.codelets[v.codelet];
      const bool uop = c.kind == CodeletKind::UOp;
      std::vector<int32_t> shared, outputs;
      if (uop)
        uopBindings(c, v, shared, outputs);
      fields.assign(v.fields.size(), {});
      bool ok = true;
      sim::forEachTile(v.tiles, [&](int64_t tile) {
        if (!ok)
          return;
        for (size_t f = 0; f < v.fields.size(); ++f)
          if (shared.empty() || shared[f] == int32_t(f))
            values.read(v.fields[f], tile, fields[f]);
        sim::UOpRun counted;
        // The vertex is cut among the workers the program was compiled for
        // (its planner cut by the same rule); Facts::workers times them.
        if (!sim::runCodelet(c, v.params, fields, im.facts, counted, error, shared,
                             im.options.maxUOpSteps, p.target.workers)) {
          error = "compute set " + std::to_string(ref) + " " + quoted(cs.name) + " vertex " +
                  std::to_string(vi) + " on tile " + std::to_string(tile) + ": " + error;
          ok = false;
          return;
        }
        if (!uop) {
          values.write(v.fields.back(), tile, fields.back());
          return;
        }
        issued[vi].push_back(std::move(counted.parts));
        for (int32_t f : outputs)
          values.write(v.fields[f], tile, fields[f]);
      });
      if (!ok)
        return false;
    }
    if (im.computeSetHasUOp[ref]) {
      sim::StepCost cost =
          sim::computeSetCost(p, cs, im.facts, &issued, &im.computeSetTiles[ref]);
      charge(im, size_t(phase), cost.cycles, cost.busy);
    }
    return true;
  }

  /// For each field of UOp vertex `v`, the first field bound to exactly the
  /// same elements (itself when none is): those fields share one vector, so
  /// that a store through one is seen by a load through the other
  /// (checkProgram refuses fields that overlap otherwise when one is an
  /// output). `outputs`: the shared vectors some output field uses, each
  /// once, to write back after the run; input fields are never written back
  /// (the codelet cannot store into them).
  static void uopBindings(const Codelet &c, const Vertex &v, std::vector<int32_t> &shared,
                          std::vector<int32_t> &outputs) {
    std::map<std::tuple<bool, int32_t, int64_t, int64_t>, int32_t> first;
    std::vector<bool> written(v.fields.size(), false);
    shared.resize(v.fields.size());
    for (size_t f = 0; f < v.fields.size(); ++f) {
      const FieldRef &r = v.fields[f];
      shared[f] = first.emplace(std::make_tuple(r.isTensor, r.object, r.offset, r.count),
                                int32_t(f))
                      .first->second;
      if (c.uopFields[f].output && !written[shared[f]]) {
        written[shared[f]] = true;
        outputs.push_back(shared[f]);
      }
    }
  }

  void exchange(int32_t ref) {
    const Exchange &x = p.exchanges[ref];
    int64_t &phase = im.exchangePhase[ref];
    if (phase < 0)
      phase = int64_t(phaseOf(im, StepKind::Copy, x.name));
    // An advancing exchange reads other tiles in each run: each run has
    // its own transfers and schedule.
    std::vector<sim::ExchangeCost> &costs = im.exchangeCosts[ref];
    sim::ExchangeCost &cost = costs[costs.size() > 1 ? size_t(run) : 0];
    if (cost.cycles < 0)
      cost = sim::exchangeCost(p, im.layouts, x, im.facts, costs.size() > 1 ? run : 0);
    charge(im, size_t(phase), cost.cycles);
    im.report.phases[size_t(phase)].boundCycles =
        sim::satAdd(im.report.phases[size_t(phase)].boundCycles, cost.bound);
    if (!im.options.values)
      return;
    // Every source is read before any destination is written.
    std::vector<std::vector<uint8_t>> staged(x.sends.size());
    for (size_t i = 0; i < x.sends.size(); ++i)
      values.stage(x.sends[i], run, staged[i]);
    for (size_t i = 0; i < x.sends.size(); ++i)
      values.deliver(x.sends[i].dst, staged[i]);
  }

  bool stream(const Step &s, std::string &error) {
    const Tensor &t = p.tensors[s.ref];
    int64_t n = im.numel[s.ref], eb = elemBytes(t.type);
    bool in = s.kind == StepKind::StreamIn;
    charge(im, phaseOf(im, s.kind, "stream " + s.stream), sim::streamCycles(n * eb, p, im.facts));
    if (!im.options.values)
      return true;
    std::vector<double> v;
    uint8_t *data = im.tensorData[s.ref].data();
    if (!in) {
      if (!im.sink)
        return true;
      v.resize(size_t(n));
      for (int64_t i = 0; i < n; ++i)
        v[i] = decodeElem(t.type, data + i * eb);
      im.sink(s.stream, v);
      return true;
    }
    if (!im.source) {
      error = "stream " + quoted(s.stream) + " into tensor " + quoted(t.name) +
              ": no stream source";
      return false;
    }
    if (!im.source(s.stream, v)) {
      error = "stream " + quoted(s.stream) + " has no more data for tensor " + quoted(t.name);
      return false;
    }
    if (int64_t(v.size()) != n) {
      error = "stream " + quoted(s.stream) + " gave " + std::to_string(v.size()) +
              " values; tensor " + quoted(t.name) + " has " + std::to_string(n) + " elements";
      return false;
    }
    for (int64_t i = 0; i < n; ++i)
      encodeElem(t.type, v[i], data + i * eb);
    return true;
  }
};

int64_t findTensor(const Program &p, std::string_view name) {
  for (size_t i = 0; i < p.tensors.size(); ++i)
    if (p.tensors[i].name == name)
      return int64_t(i);
  return -1;
}

} // namespace

Simulator::Simulator(const Program &program, const Facts &facts, SimOptions options)
    : impl(std::make_unique<Impl>()) {
  Impl &im = *impl;
  im.program = program;
  im.facts = facts;
  im.options = options;
  im.report.syncCycles = facts.syncCycles;
  const Program &p = im.program;
  if (!checkProgram(p, im.problem))
    return;
  for (const Codelet &c : p.codelets)
    if (c.kind == CodeletKind::AmpMatmul && !facts.fp8Amp &&
        (c.inType == ElemType::F8E4M3 || c.inType == ElemType::F8E5M2)) {
      im.problem = "codelet " + quoted(c.name) + " multiplies " + elemName(c.inType) +
                   " on the AMP; only ipu21 has an FP8 AMP, these facts are " +
                   quoted(facts.arch) + "'s";
      return;
    }

  // A UOp vertex's cycles are the instructions it issued, counted as it
  // runs: its compute set cannot be charged without running it.
  for (const ComputeSet &cs : p.computeSets) {
    bool uop = false;
    for (const Vertex &v : cs.vertices)
      uop = uop || p.codelets[v.codelet].kind == CodeletKind::UOp;
    im.computeSetHasUOp.push_back(uop);
    if (uop && !options.values) {
      im.problem = "compute set " + quoted(cs.name) +
                   " runs UOp codelets, whose cycles are counted as they run: the "
                   "simulator needs values (not timing only)";
      return;
    }
  }

  for (const Tensor &t : p.tensors) {
    im.layouts.emplace_back(t);
    im.numel.push_back(sim::shapeElements(t.shape, kMaxCount));
  }
  for (const Buffer &b : p.buffers)
    im.bufferRanks.emplace_back(b.tiles);

  // The values' bytes, refused (before allocating) beyond options.maxBytes.
  int64_t bytes = 0;
  if (options.values) {
    for (size_t i = 0; i < p.tensors.size(); ++i)
      bytes = sim::satAdd(bytes, im.numel[i] * elemBytes(p.tensors[i].type));
    for (const Buffer &b : p.buffers)
      bytes = sim::satAdd(bytes, sim::satMul(b.tiles.count(), b.elements * elemBytes(b.type)));
    if (bytes > options.maxBytes) {
      im.problem = "the program's values need " + std::to_string(bytes) +
                   " bytes; the simulator may hold " + std::to_string(options.maxBytes);
      return;
    }
  }
  if (!im.indexTileObjects(options.maxBytes - bytes))
    return;
  if (options.values) {
    for (size_t i = 0; i < p.tensors.size(); ++i)
      im.tensorData.emplace_back(size_t(im.numel[i] * elemBytes(p.tensors[i].type)), 0);
    for (const Buffer &b : p.buffers)
      im.bufferData.emplace_back(size_t(b.tiles.count() * b.elements * elemBytes(b.type)), 0);
  }

  for (const ComputeSet &cs : p.computeSets) {
    im.computeSetCosts.push_back(sim::computeSetCost(p, cs, facts));
    im.computeSetTiles.push_back(sim::computeSetTiles(cs));
  }
  // Each exchange's schedule was checked against the target's facts; the
  // simulator's may name another exchange bus.
  if (facts.tilesPerExchangeBus != factsFor(p.target.arch).value_or(Facts()).tilesPerExchangeBus) {
    for (const Exchange &x : p.exchanges)
      if (auto [run, why] = sim::firstBadRun(p, im.layouts, x, facts.tilesPerExchangeBus);
          run >= 0) {
        im.problem = "exchange " + quoted(x.name) + ": its schedule does not hold with " +
                     std::to_string(facts.tilesPerExchangeBus) + " tiles per exchange bus: " + why;
        return;
      }
  }
  for (const Exchange &x : p.exchanges)
    im.exchangeCosts.emplace_back(x.schedule.size(), sim::ExchangeCost{-1, 0});
  im.computeSetPhase.assign(p.computeSets.size(), -1);
  im.exchangePhase.assign(p.exchanges.size(), -1);
  im.findBusiestTile();
}

Simulator::~Simulator() = default;

bool Simulator::valid(std::string &error) const {
  if (impl->problem.empty())
    return true;
  error = impl->problem;
  return false;
}

/// The index of tensor `name` when the simulator keeps values; else -1 and
/// `error` says why.
static int64_t valuesOf(const Simulator &sim, const Simulator::Impl &im, std::string_view name,
                        std::string &error) {
  if (!sim.valid(error))
    return -1;
  if (!im.options.values) {
    error = "the simulator keeps no values (timing only)";
    return -1;
  }
  int64_t i = findTensor(im.program, name);
  if (i < 0)
    error = "no tensor named " + quoted(name);
  return i;
}

bool Simulator::setTensor(std::string_view name, const std::vector<double> &values,
                          std::string &error) {
  Impl &im = *impl;
  int64_t i = valuesOf(*this, im, name, error);
  if (i < 0)
    return false;
  if (int64_t(values.size()) != im.numel[i]) {
    error = "tensor " + quoted(name) + " has " + std::to_string(im.numel[i]) + " elements, not " +
            std::to_string(values.size());
    return false;
  }
  ElemType t = im.program.tensors[i].type;
  int64_t eb = elemBytes(t);
  for (size_t k = 0; k < values.size(); ++k)
    encodeElem(t, values[k], im.tensorData[i].data() + k * eb);
  return true;
}

bool Simulator::getTensor(std::string_view name, std::vector<double> &values,
                          std::string &error) const {
  const Impl &im = *impl;
  int64_t i = valuesOf(*this, im, name, error);
  if (i < 0)
    return false;
  ElemType t = im.program.tensors[i].type;
  int64_t eb = elemBytes(t);
  values.resize(size_t(im.numel[i]));
  for (size_t k = 0; k < values.size(); ++k)
    values[k] = decodeElem(t, im.tensorData[i].data() + k * eb);
  return true;
}

void Simulator::setStreamSource(StreamSource source) {
  impl->source = std::move(source);
}

void Simulator::setStreamSink(StreamSink sink) {
  impl->sink = std::move(sink);
}

bool Simulator::run(std::string &error) {
  if (!valid(error))
    return false;
  impl->report.runs += 1;
  return Runner(*impl).step(impl->program.main, error);
}

const SimReport &Simulator::report() const { return impl->report; }

std::vector<MemoryObject> Simulator::memoryMap(int64_t tile) const {
  return impl->memoryMap(tile);
}

} // namespace synpl::ipu21::sim
