//===- Check.cpp - The rules every simulated ipu21 program satisfies -----===//
//
// checkProgram (ProgramFile.h lists the rules): what a corrupt or hostile
// program file could break in the reader or the simulator -- indices,
// ranges, counts, types, nesting -- checked in an order that lets each rule
// rely on the ones before it (a vertex's fields are checked against tensor
// layouts built only after every mapping passed). The first broken rule is
// reported as one line.
//
//===----------------------------------------------------------------------===//
#include "Layout.h"
#include "Names.h"

#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace synpl::ipu21::sim {
namespace {



std::string quote(const std::string &name) { return quoteName(name); }

std::string str(int64_t v) { return std::to_string(v); }

bool validElem(ElemType t) { return static_cast<uint8_t>(t) <= static_cast<uint8_t>(ElemType::U8); }
bool isF8(ElemType t) { return t == ElemType::F8E4M3 || t == ElemType::F8E5M2; }

/// Minimum over a fixed array in O(1) per query (a sparse table).
struct RangeMin {
  std::vector<std::vector<int64_t>> levels;
  void build(const std::vector<int64_t> &a) {
    levels.assign(1, a);
    for (size_t w = 1; 2 * w <= a.size(); w *= 2) {
      const auto &prev = levels.back();
      std::vector<int64_t> next(prev.size() - w);
      for (size_t i = 0; i < next.size(); ++i)
        next[i] = std::min(prev[i], prev[i + w]);
      levels.push_back(std::move(next));
    }
  }
  /// min of a[lo, hi), lo < hi.
  int64_t min(size_t lo, size_t hi) const {
    size_t j = 0;
    while ((size_t(2) << j) <= hi - lo)
      ++j;
    return std::min(levels[j][lo], levels[j][hi - (size_t(1) << j)]);
  }
};

class Checker {
public:
  Checker(const Program &p, std::string &error) : p(p), error(error) {}

  bool run() {
    return target() && tensors() && buffers() && codelets() && computeSets() && exchanges() &&
           steps();
  }

private:
  const Program &p;
  std::string &error;
  std::vector<int64_t> numel;
  std::vector<int64_t> copyRuns; // runsOf(), filled on first use
  std::vector<TensorLayout> layouts;
  std::vector<RangeMin> tileMins;
  std::vector<bool> tileMinsBuilt;

  bool fail(std::string msg) {
    error = std::move(msg);
    return false;
  }
  /// `v` in [0, kMaxCount].
  bool size(int64_t v, const std::string &what) {
    if (v >= 0 && v <= kMaxCount)
      return true;
    return fail(what + " is " + str(v) + ", outside [0, 2^40]");
  }
  std::string tensorName(int64_t i) { return "tensor " + str(i) + " " + quote(p.tensors[i].name); }
  std::string bufferName(int64_t i) { return "buffer " + str(i) + " " + quote(p.buffers[i].name); }

  bool target() {
    const Target &t = p.target;
    if (t.tiles < 1 || t.tiles > kMaxTiles)
      return fail("target: " + str(t.tiles) + " tiles; a target has 1 to " + str(kMaxTiles));
    if (t.clockHz < 1 || t.clockHz > int64_t(1e12))
      return fail("target: clock " + str(t.clockHz) + " Hz is outside [1, 1e12]");
    return size(t.bytesPerTile, "target bytesPerTile") &&
           size(t.elementBytes, "target elementBytes") && size(t.workers, "target workers") &&
           size(t.sramBase, "target sramBase") && size(t.execEnd, "target execEnd") &&
           size(t.interleavedBegin, "target interleavedBegin") &&
           size(t.sramEnd, "target sramEnd") && size(t.rptCountMax, "target rptCountMax");
  }

  bool tileSet(const TileSet &s, const std::string &what) {
    int64_t prevEnd = 0;
    for (size_t i = 0; i < s.ranges.size(); ++i) {
      auto [a, b] = s.ranges[i];
      if (a < 0 || b > p.target.tiles || a >= b)
        return fail(what + ": tile range [" + str(a) + ", " + str(b) +
                    ") is empty or outside the target's " + str(p.target.tiles) + " tiles");
      if (i > 0 && a < prevEnd)
        return fail(what + ": tile ranges are not sorted and disjoint at [" + str(a) + ", " +
                    str(b) + ")");
      prevEnd = b;
    }
    return true;
  }

  bool tensors() {
    if (p.tensors.size() > size_t(INT32_MAX))
      return fail("program has more than 2^31 tensors");
    for (size_t i = 0; i < p.tensors.size(); ++i) {
      const Tensor &t = p.tensors[i];
      std::string name = tensorName(i);
      if (!validElem(t.type))
        return fail(name + ": element type " + str(int(t.type)) + " is not one of 0..5");
      int64_t n = sim::shapeElements(t.shape, kMaxCount);
      if (n < 0)
        return fail(name + ": its shape has a negative dimension or more than 2^40 elements");
      if (!size(t.address, name + " address"))
        return false;
      if (t.mapping.size() > size_t(INT32_MAX))
        return fail(name + ": more than 2^31 intervals");
      for (size_t k = 0; k < t.mapping.size(); ++k) {
        const Interval &iv = t.mapping[k];
        std::string at = name + " interval " + str(k) + " (tile " + str(iv.tile) + ", [" +
                         str(iv.begin) + ", " + str(iv.end) + "))";
        if (iv.tile < 0 || iv.tile >= p.target.tiles)
          return fail(at + ": the target has " + str(p.target.tiles) + " tiles");
        if (iv.begin < 0 || iv.begin > iv.end || iv.end > n)
          return fail(at + ": not a range of its " + str(n) + " elements");
        if (k > 0) {
          const Interval &pr = t.mapping[k - 1];
          if (pr.tile > iv.tile || (pr.tile == iv.tile && pr.begin > iv.begin))
            return fail(at + ": the mapping is not sorted by tile, then begin");
        }
      }
      TensorLayout layout(t);
      int64_t next = 0;
      for (int32_t k : layout.byBegin) {
        const Interval &iv = t.mapping[k];
        if (iv.begin < next)
          return fail(name + ": element " + str(iv.begin) + " lives on two tiles");
        if (iv.begin > next)
          return fail(name + ": elements [" + str(next) + ", " + str(iv.begin) +
                      ") live on no tile");
        next = iv.end;
      }
      if (next != n)
        return fail(name + ": elements [" + str(next) + ", " + str(n) + ") live on no tile");
      numel.push_back(n);
      layouts.push_back(std::move(layout));
    }
    tileMins.resize(p.tensors.size());
    tileMinsBuilt.assign(p.tensors.size(), false);
    return true;
  }

  bool buffers() {
    if (p.buffers.size() > size_t(INT32_MAX))
      return fail("program has more than 2^31 buffers");
    for (size_t i = 0; i < p.buffers.size(); ++i) {
      const Buffer &b = p.buffers[i];
      std::string name = bufferName(i);
      if (!validElem(b.type))
        return fail(name + ": element type " + str(int(b.type)) + " is not one of 0..5");
      if (!tileSet(b.tiles, name) || !size(b.elements, name + " elements") ||
          !size(b.address, name + " address"))
        return false;
    }
    return true;
  }

  bool codelets() {
    if (p.codelets.size() > size_t(INT32_MAX))
      return fail("program has more than 2^31 codelets");
    for (size_t i = 0; i < p.codelets.size(); ++i) {
      const Codelet &c = p.codelets[i];
      std::string name = "codelet " + str(i) + " " + quote(c.name);
      if (static_cast<uint8_t>(c.kind) > static_cast<uint8_t>(CodeletKind::Fill))
        return fail(name + ": kind " + str(int(c.kind)) + " is not one of 0..3");
      if (!validElem(c.inType) || !validElem(c.outType))
        return fail(name + ": an element type is not one of 0..5");
      if (!size(c.codeBytes, name + " code bytes") || !size(c.address, name + " address"))
        return false;
      if (c.kind == CodeletKind::AmpMatmul) {
        bool f32 = c.inType == ElemType::F32 && c.outType == ElemType::F32;
        bool f16 = (c.inType == ElemType::F16 || isF8(c.inType)) &&
                   (c.outType == ElemType::F32 || c.outType == ElemType::F16);
        if (!f32 && !f16)
          return fail(name + ": the AMP reads f32 into f32, or f16 or f8 into f32 or f16, not " +
                      elemName(c.inType) + " into " + elemName(c.outType));
      }
    }
    return true;
  }

  /// The fields' element types and the params count of each codelet kind.
  static std::vector<ElemType> fieldTypes(const Codelet &c) {
    switch (c.kind) {
    case CodeletKind::AmpMatmul:
      return {c.inType, c.inType, c.outType};
    case CodeletKind::ReduceAdd:
    case CodeletKind::Copy:
      return {c.inType, c.outType};
    case CodeletKind::Fill:
      return {c.outType};
    }
    return {};
  }
  static size_t paramCount(CodeletKind k) {
    switch (k) {
    case CodeletKind::AmpMatmul:
      return 4;
    case CodeletKind::ReduceAdd:
      return 3;
    case CodeletKind::Copy:
      return 1;
    case CodeletKind::Fill:
      return 2;
    }
    return 0;
  }

  /// Elements each field must have, from the params.
  bool fieldCounts(const Codelet &c, const Vertex &v, const std::string &name,
                   std::vector<int64_t> &counts) {
    const auto &q = v.params;
    auto product = [&](int64_t a, int64_t b) {
      int64_t r;
      return __builtin_mul_overflow(a, b, &r) ? int64_t(-1) : r;
    };
    switch (c.kind) {
    case CodeletKind::AmpMatmul:
      if (!size(q[0], name + " m") || !size(q[1], name + " n") || !size(q[2], name + " k"))
        return false;
      if (q[3] != 0 && q[3] != 1)
        return fail(name + ": accumulate is " + str(q[3]) + ", not 0 or 1");
      counts = {product(q[0], q[2]), product(q[2], q[1]), product(q[0], q[1])};
      return true;
    case CodeletKind::ReduceAdd:
      if (!size(q[0], name + " p") || !size(q[1], name + " n"))
        return false;
      if (q[2] != 0 && q[2] != 1)
        return fail(name + ": accumulate is " + str(q[2]) + ", not 0 or 1");
      counts = {product(q[0], q[1]), q[1]};
      return true;
    case CodeletKind::Copy:
      if (!size(q[0], name + " count"))
        return false;
      counts = {q[0], q[0]};
      return true;
    case CodeletKind::Fill:
      if (!size(q[0], name + " count"))
        return false;
      counts = {q[0]};
      return true;
    }
    return false;
  }

  /// A tensor field's tile-local elements [offset, need) exist on every tile of `tiles`.
  bool tensorHolds(int32_t ti, const TileSet &tiles, int64_t offset, int64_t need,
                   const std::string &name) {
    const TensorLayout &l = layouts[ti];
    if (!tileMinsBuilt[ti]) {
      tileMins[ti].build(l.count);
      tileMinsBuilt[ti] = true;
    }
    for (const auto &range : tiles.ranges) {
      const int64_t a = range.first, b = range.second;
      size_t idx = std::lower_bound(l.tiles.begin(), l.tiles.end(), a) - l.tiles.begin();
      size_t len = size_t(b - a);
      // Held tiles are distinct and sorted: tiles[idx + i] - (a + i) never decreases,
      // so [a, b) is all held iff it is 0 at both ends.
      auto gapAt = [&](size_t i) {
        return idx + i >= l.tiles.size() || l.tiles[idx + i] != a + int64_t(i);
      };
      if (gapAt(0) || gapAt(len - 1)) {
        size_t lo = 0, hi = len - 1; // the first i with a gap
        while (lo < hi) {
          size_t mid = lo + (hi - lo) / 2;
          if (gapAt(mid))
            hi = mid;
          else
            lo = mid + 1;
        }
        return fail(name + ": " + tensorName(ti) + " has no elements on tile " +
                    str(a + int64_t(lo)));
      }
      if (tileMins[ti].min(idx, idx + len) < need) {
        for (size_t i = idx; i < idx + len; ++i)
          if (l.count[i] < need)
            return fail(name + ": tile-local elements [" + str(offset) + ", " + str(need) +
                        ") pass the " +
                        str(l.count[i]) + " elements of " + tensorName(ti) + " on tile " +
                        str(l.tiles[i]));
      }
    }
    return true;
  }

  bool vertex(const Vertex &v, const std::string &name) {
    if (v.codelet < 0 || size_t(v.codelet) >= p.codelets.size())
      return fail(name + ": codelet " + str(v.codelet) + " does not exist (the program has " +
                  str(p.codelets.size()) + ")");
    const Codelet &c = p.codelets[v.codelet];
    if (!tileSet(v.tiles, name) || !size(v.stateAddress, name + " state address") ||
        !size(v.stateBytes, name + " state bytes"))
      return false;
    std::vector<ElemType> types = fieldTypes(c);
    if (v.fields.size() != types.size() || v.params.size() != paramCount(c.kind))
      return fail(name + ": codelet " + quote(c.name) + " takes " + str(types.size()) +
                  " fields and " + str(paramCount(c.kind)) + " params, not " +
                  str(v.fields.size()) + " and " + str(v.params.size()));
    std::vector<int64_t> counts;
    if (!fieldCounts(c, v, name, counts))
      return false;
    for (size_t f = 0; f < v.fields.size(); ++f) {
      const FieldRef &r = v.fields[f];
      std::string at = name + " field " + str(f);
      if (!size(r.offset, at + " offset") || !size(r.count, at + " count"))
        return false;
      if (r.count != counts[f])
        return fail(at + ": " + str(r.count) + " elements; the params say " + str(counts[f]));
      int64_t need = r.offset + r.count;
      if (r.isTensor) {
        if (r.object < 0 || size_t(r.object) >= p.tensors.size())
          return fail(at + ": tensor " + str(r.object) + " does not exist");
        if (p.tensors[r.object].type != types[f])
          return fail(at + ": " + tensorName(r.object) + " is " +
                      elemName(p.tensors[r.object].type) + "; the codelet needs " +
                      elemName(types[f]));
        if (need > 0 && !tensorHolds(r.object, v.tiles, r.offset, need, at))
          return false;
      } else {
        if (r.object < 0 || size_t(r.object) >= p.buffers.size())
          return fail(at + ": buffer " + str(r.object) + " does not exist");
        const Buffer &b = p.buffers[r.object];
        if (b.type != types[f])
          return fail(at + ": " + bufferName(r.object) + " is " + elemName(b.type) +
                      "; the codelet needs " + elemName(types[f]));
        if (need > 0 && !sim::tileSetIncludes(b.tiles, v.tiles))
          return fail(at + ": " + bufferName(r.object) + " is not on every tile of the vertex");
        if (need > b.elements)
          return fail(at + ": tile-local elements [" + str(r.offset) + ", " + str(need) +
                      ") pass the " + str(b.elements) + " elements of " + bufferName(r.object));
      }
    }
    return true;
  }

  bool computeSets() {
    if (p.computeSets.size() > size_t(INT32_MAX))
      return fail("program has more than 2^31 compute sets");
    for (size_t i = 0; i < p.computeSets.size(); ++i) {
      const ComputeSet &cs = p.computeSets[i];
      for (size_t j = 0; j < cs.vertices.size(); ++j)
        if (!vertex(cs.vertices[j],
                    "compute set " + str(i) + " " + quote(cs.name) + " vertex " + str(j)))
          return false;
    }
    return true;
  }

  bool endpoint(const Endpoint &e, int64_t count, bool source, const std::string &at,
                ElemType &type) {
    if (!size(e.begin, at + " begin"))
      return false;
    int64_t end = e.begin + count;
    if (e.isTensor) {
      if (e.object < 0 || size_t(e.object) >= p.tensors.size())
        return fail(at + ": tensor " + str(e.object) + " does not exist");
      type = p.tensors[e.object].type;
      if (end > numel[e.object])
        return fail(at + ": elements [" + str(e.begin) + ", " + str(end) + ") pass the " +
                    str(numel[e.object]) + " elements of " + tensorName(e.object));
      return true;
    }
    if (e.object < 0 || size_t(e.object) >= p.buffers.size())
      return fail(at + ": buffer " + str(e.object) + " does not exist");
    const Buffer &b = p.buffers[e.object];
    type = b.type;
    if (!tileSet(e.tiles, at))
      return false;
    int64_t n = e.tiles.count();
    if (source ? n != 1 : n < 1)
      return fail(at + ": a " + (source ? "source buffer names exactly one tile"
                                        : "destination buffer names at least one tile") +
                  ", not " + str(n));
    if (!sim::tileSetIncludes(b.tiles, e.tiles))
      return fail(at + ": " + bufferName(e.object) + " is not on every tile named");
    if (end > b.elements)
      return fail(at + ": elements [" + str(e.begin) + ", " + str(end) + ") pass the " +
                  str(b.elements) + " elements of " + bufferName(e.object));
    return true;
  }

  /// How far exchange `x`'s advancing sends go (copyRuns, Program.h).
  int64_t runsOf(size_t x) {
    if (copyRuns.empty())
      copyRuns = sim::copyRuns(p, kMaxStepDepth);
    return copyRuns[x];
  }

  bool exchanges() {
    if (p.exchanges.size() > size_t(INT32_MAX))
      return fail("program has more than 2^31 exchanges");
    for (size_t i = 0; i < p.exchanges.size(); ++i) {
      const Exchange &x = p.exchanges[i];
      std::string name = "exchange " + str(i) + " " + quote(x.name);
      if (!size(x.descriptorAddress, name + " descriptor address") ||
          !size(x.descriptorBytes, name + " descriptor bytes"))
        return false;
      int64_t runs = runsOf(i);
      for (size_t j = 0; j < x.sends.size(); ++j) {
        const Send &s = x.sends[j];
        std::string at = name + " send " + str(j);
        ElemType from = ElemType::F32, to = ElemType::F32;
        if (!size(s.count, at + " count") || !size(s.rowStride, at + " row stride") ||
            !size(s.advance, at + " advance"))
          return false;
        if (s.count < 1)
          return fail(at + ": moves no elements");
        if (s.rows < 1 || s.rows > s.count || s.count % s.rows)
          return fail(at + ": " + str(s.count) + " elements do not make " + str(s.rows) +
                      " whole rows");
        int64_t rowLength = s.count / s.rows;
        if ((s.rows > 1 || s.advance) && !s.src.isTensor)
          return fail(at + ": rows and advance read tensors; a buffer source is one range");
        if (s.rows > 1 && s.rowStride < rowLength)
          return fail(at + ": row stride " + str(s.rowStride) + " is shorter than a row (" +
                      str(rowLength) + " elements)");
        // What the source reaches in its last run: the last row's end.
        int64_t extent = sim::sourceExtent(s, runs);
        if (!size(extent, at + " source extent") ||
            !endpoint(s.src, extent, true, at + " source", from) ||
            !endpoint(s.dst, s.count, false, at + " destination", to))
          return false;
        if (from != to)
          return fail(at + ": sends " + elemName(from) + " into " + elemName(to) +
                      "; an exchange does not convert");
      }
    }
    return true;
  }

  bool step(const Step &s, int depth, std::string &path) {
    if (depth > kMaxStepDepth)
      return fail("step " + path + ": steps nest deeper than " + str(kMaxStepDepth));
    if (static_cast<uint8_t>(s.kind) > static_cast<uint8_t>(StepKind::StreamOut))
      return fail("step " + path + ": kind " + str(int(s.kind)) + " is not one of 0..7");
    std::string at = "step " + path + " (" + stepKindName(s.kind) + ")";
    bool hasBody = s.kind == StepKind::Sequence || s.kind == StepKind::Repeat ||
                   s.kind == StepKind::If;
    if ((!hasBody && !s.body.empty()) || (s.kind != StepKind::If && !s.elseBody.empty()))
      return fail(at + ": this kind of step has no body");
    switch (s.kind) {
    case StepKind::Sequence:
    case StepKind::Sync:
      break;
    case StepKind::Repeat:
      if (s.count < 0)
        return fail(at + ": count " + str(s.count) + " is negative");
      break;
    case StepKind::Execute:
      if (s.ref < 0 || size_t(s.ref) >= p.computeSets.size())
        return fail(at + ": compute set " + str(s.ref) + " does not exist");
      break;
    case StepKind::Copy:
      if (s.ref < 0 || size_t(s.ref) >= p.exchanges.size())
        return fail(at + ": exchange " + str(s.ref) + " does not exist");
      break;
    case StepKind::If:
    case StepKind::StreamIn:
    case StepKind::StreamOut:
      if (s.ref < 0 || size_t(s.ref) >= p.tensors.size())
        return fail(at + ": tensor " + str(s.ref) + " does not exist");
      if (s.kind == StepKind::If && numel[s.ref] < 1)
        return fail(at + ": " + tensorName(s.ref) + " has no element 0 to test");
      if (s.kind != StepKind::If && s.stream.empty())
        return fail(at + ": the stream has no name");
      break;
    }
    for (int pass = 0; pass < 2; ++pass) {
      const auto &body = pass == 0 ? s.body : s.elseBody;
      for (size_t i = 0; i < body.size(); ++i) {
        size_t keep = path.size();
        path += (pass == 0 ? "/" : "/else/") + str(i);
        if (!step(body[i], depth + 1, path))
          return false;
        path.resize(keep);
      }
    }
    return true;
  }

  bool steps() {
    if (p.main.kind != StepKind::Sequence)
      return fail("main is a " + std::string(stepKindName(p.main.kind)) + ", not a sequence");
    std::string path = "main";
    return step(p.main, 1, path);
  }
};

} // namespace

bool checkProgram(const Program &program, std::string &error) {
  return Checker(program, error).run();
}

} // namespace synpl::ipu21::sim
