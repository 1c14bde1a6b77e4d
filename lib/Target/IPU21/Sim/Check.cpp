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
#include "Cost.h"
#include "Layout.h"
#include "Names.h"
#include "UOp.h"

#include "synpl/Target/IPU21/ExchangeSchedule.h"
#include "synpl/Target/IPU21/ProgramFile.h"
#include "synpl/Target/IPU21/Simulator.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
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

  bool run(bool withSchedules) {
    return target() && tensors() && buffers() && codelets() && computeSets() && exchanges() &&
           steps() && host() && (!withSchedules || schedules());
  }

private:
  const Program &p;
  std::string &error;
  std::vector<int64_t> numel;
  std::vector<int64_t> copyRuns; // runsOf(), filled on first use
  std::vector<TensorLayout> layouts;
  std::vector<RangeMin> tileMins;
  std::vector<bool> tileMinsBuilt;
  /// Per codelet (UOp codelets only; empty for the others): its parallel
  /// slots' Range UOps, its fields' element types and its vertices' params
  /// count, computed once rather than for each of its vertices.
  std::vector<std::vector<int32_t>> parallelRanges;
  std::vector<std::vector<ElemType>> uopTypes;
  std::vector<size_t> uopParams;

  bool fail(std::string msg) {
    error = std::move(msg);
    return false;
  }
  /// The host side is opaque here (the runtime checks its records): both
  /// parts or neither, the strings NUL-terminated.
  bool host() {
    if (p.hostTable.empty() && p.hostStrings.empty())
      return true;
    if (p.hostTable.empty() || p.hostStrings.empty() || p.hostStrings.back() != '\0')
      return fail("the host side needs its tables and its strings, which end with a NUL");
    if (int64_t(p.hostTable.size()) > kMaxCount)
      return fail("the host tables hold more than " + std::to_string(kMaxCount) + " words");
    return true;
  }
  /// Every exchange has a round list per run (one unless a send advances)
  /// that is a schedule of its transfers on the target's exchange buses.
  bool schedules() {
    const int64_t bus = factsFor(p.target.arch).value_or(Facts()).tilesPerExchangeBus;
    for (size_t i = 0; i < p.exchanges.size(); ++i) {
      const Exchange &x = p.exchanges[i];
      std::string name = "exchange " + str(int64_t(i)) + " " + quote(x.name);
      size_t runs = sim::advances(x) ? size_t(runsOf(i)) : 1;
      if (x.schedule.empty())
        return fail(name + " has no schedule (scheduleExchanges writes one)");
      if (x.schedule.size() != runs)
        return fail(name + ": its schedule has rounds for " + str(int64_t(x.schedule.size())) +
                    " runs, not " + str(int64_t(runs)) +
                    " (one per run of the Repeat around an advancing send, else one)");
      auto [run, why] = firstBadRun(p, layouts, x, bus);
      if (run >= 0)
        return fail(name + (runs > 1 ? " run " + str(run) : std::string()) + ": schedule: " + why);
    }
    return true;
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
    if (t.workers < 0 || t.workers > kMaxWorkers)
      return fail("target: " + str(t.workers) + " workers; a target has 0 to " +
                  str(kMaxWorkers));
    return size(t.bytesPerTile, "target bytesPerTile") &&
           size(t.elementBytes, "target elementBytes") &&
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
      if (static_cast<uint8_t>(c.kind) > static_cast<uint8_t>(CodeletKind::UOp))
        return fail(name + ": kind " + str(int(c.kind)) + " is not one of 0..4");
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
      std::string uopError;
      if (!checkUOpCodelet(c, uopError))
        return fail(name + ": " + uopError);
      parallelRanges.emplace_back();
      uopTypes.emplace_back();
      uopParams.push_back(0);
      if (c.kind == CodeletKind::UOp) {
        parallelRanges.back() = uopParallelRanges(c);
        // [lo, hi) per parallel range, then (lo, ext) per field dimension.
        size_t n = 2 * parallelRanges.back().size();
        for (const UOpField &f : c.uopFields) {
          uopTypes.back().push_back(f.type);
          n += 2 * f.shape.size();
        }
        uopParams.back() = n;
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
    case CodeletKind::UOp:
      break; // uopTypes
    }
    return {};
  }
  size_t paramCount(int32_t codelet) const {
    const Codelet &c = p.codelets[codelet];
    switch (c.kind) {
    case CodeletKind::AmpMatmul:
      return 4;
    case CodeletKind::ReduceAdd:
      return 3;
    case CodeletKind::Copy:
      return 1;
    case CodeletKind::Fill:
      return 2;
    case CodeletKind::UOp:
      return uopParams[codelet];
    }
    return 0;
  }

  /// A UOp vertex's params: each parallel range's [lo, hi) within the
  /// Range's own, each field's window inside the field's shape; `counts`
  /// the elements of each window box.
  bool uopCounts(const Codelet &c, const Vertex &v, const std::string &name,
                 std::vector<int64_t> &counts) {
    const auto &q = v.params;
    const std::vector<int32_t> &ranges = parallelRanges[v.codelet];
    for (size_t k = 0; k < ranges.size(); ++k) {
      const UInst &r = c.uop[ranges[k]];
      int64_t lo = q[2 * k], hi = q[2 * k + 1];
      if (lo > hi || lo < r.lo || hi > r.hi)
        return fail(name + ": parallel slot " + str(int64_t(k)) + " takes [" + str(lo) + ", " +
                    str(hi) + "), not a range within its UOp " + str(ranges[k]) + "'s [" +
                    str(r.lo) + ", " + str(r.hi) + ")");
    }
    size_t at = 2 * ranges.size();
    for (size_t f = 0; f < c.uopFields.size(); ++f) {
      const UOpField &u = c.uopFields[f];
      int64_t n = 1;
      for (size_t d = 0; d < u.shape.size(); ++d, at += 2) {
        int64_t lo = q[at], ext = q[at + 1];
        // ext <= shape[d] - lo: no sum here can overflow.
        if (lo < 0 || ext < 0 || lo > u.shape[d] || ext > u.shape[d] - lo)
          return fail(name + " field " + str(int64_t(f)) + " " + quote(u.name) +
                      ": the window [" + str(lo) + ", " + str(lo) + " + " + str(ext) +
                      ") of dimension " + str(int64_t(d)) + " is not within its " +
                      str(u.shape[d]) + " indices");
        n *= ext; // at most the shape's product, at most 2^40
      }
      counts.push_back(n);
    }
    return true;
  }

  /// Two fields of a UOp vertex that bind overlapping elements of one object
  /// bind exactly the same ones when either is an output (the simulator
  /// lets identical bindings share one copy; a partial overlap would make
  /// a store visible through one field and not the other). Sorted by
  /// object and offset, a field overlaps an earlier one iff an earlier
  /// field of its object ends past its offset: O(F log F) for F fields.
  bool uopAliasing(const Codelet &c, const Vertex &v, const std::string &name) {
    std::vector<size_t> order;
    for (size_t f = 0; f < v.fields.size(); ++f)
      if (v.fields[f].count > 0)
        order.push_back(f);
    auto key = [&](size_t f) {
      const FieldRef &r = v.fields[f];
      return std::make_tuple(r.isTensor, r.object, r.offset, r.count, f);
    };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    // Fields bound to exactly the same elements form a group (they share
    // one copy), an output group if any of them is an output. Of the
    // earlier groups of the current object: the one reaching furthest, and
    // the output one reaching furthest (a field of each, for messages).
    auto end = [&](size_t f) { return v.fields[f].offset + v.fields[f].count; };
    auto refuse = [&](size_t a, size_t b) {
      size_t g = std::min(a, b), f = std::max(a, b);
      return fail(name + ": fields " + str(int64_t(g)) + " " + quote(c.uopFields[g].name) +
                  " and " + str(int64_t(f)) + " " + quote(c.uopFields[f].name) +
                  " overlap without binding the same elements");
    };
    size_t reach = 0, outReach = 0;
    bool any = false, anyOut = false;
    for (size_t k = 0; k < order.size();) {
      const FieldRef &r = v.fields[order[k]];
      if (k > 0) {
        const FieldRef &prev = v.fields[order[k - 1]];
        if (prev.isTensor != r.isTensor || prev.object != r.object)
          any = anyOut = false; // a new object
      }
      size_t first = order[k], out = first;
      bool output = false;
      for (; k < order.size(); ++k) {
        const FieldRef &m = v.fields[order[k]];
        if (m.isTensor != r.isTensor || m.object != r.object || m.offset != r.offset ||
            m.count != r.count)
          break;
        if (c.uopFields[order[k]].output && !output)
          out = order[k], output = true;
      }
      // Every earlier group starts at or before this one: it overlaps this
      // one iff it ends past this one's offset.
      if (anyOut && end(outReach) > r.offset)
        return refuse(outReach, first);
      if (output && any && end(reach) > r.offset)
        return refuse(reach, out);
      if (!any || end(first) > end(reach))
        reach = first, any = true;
      if (output && (!anyOut || end(first) > end(outReach)))
        outReach = out, anyOut = true;
    }
    return true;
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
    case CodeletKind::UOp:
      return uopCounts(c, v, name, counts);
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
    std::vector<ElemType> fixedTypes;
    if (c.kind != CodeletKind::UOp)
      fixedTypes = fieldTypes(c);
    const std::vector<ElemType> &types =
        c.kind == CodeletKind::UOp ? uopTypes[v.codelet] : fixedTypes;
    if (v.fields.size() != types.size() || v.params.size() != paramCount(v.codelet))
      return fail(name + ": codelet " + quote(c.name) + " takes " + str(types.size()) +
                  " fields and " + str(paramCount(v.codelet)) + " params, not " +
                  str(v.fields.size()) + " and " + str(v.params.size()));
    std::vector<int64_t> counts;
    if (!fieldCounts(c, v, name, counts))
      return false;
    for (size_t f = 0; f < v.fields.size(); ++f) {
      const FieldRef &r = v.fields[f];
      std::string at = name + " field " + str(f);
      if (c.kind == CodeletKind::UOp)
        at += " " + quote(c.uopFields[f].name);
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
    return c.kind != CodeletKind::UOp || uopAliasing(c, v, name);
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

bool checkProgram(const Program &program, std::string &error, CheckSchedules schedules) {
  return Checker(program, error).run(schedules == CheckSchedules::Yes);
}

} // namespace synpl::ipu21::sim
