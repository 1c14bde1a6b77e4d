//===- Exchange.cpp - Exchange transfers and their schedule ---------------===//
//
// The model is in ExchangeSchedule.h. The colouring keeps, per tile, the
// receive slots it has used in each round, and per transfer the rounds
// already closed to it (its saturation). Placing a transfer touches only
// the transfers that share one of its tiles: each sender of its source has
// the round closed; each receiver of its destinations has it closed when
// the slots left there no longer hold it. Closing raises the saturation and
// pushes a fresh queue entry (stale entries are skipped when popped).
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/IPU21/ExchangeSchedule.h"
#include "synpl/Target/IPU21/ProgramFile.h"

#include "Cost.h"
#include "Layout.h"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>

namespace synpl::ipu21::sim {

namespace {

int64_t positive(int64_t v) { return v > 0 ? v : 1; }

/// The receive slots `t` takes on its i-th destination.
int64_t slotsOn(const Transfer &t, size_t i, int64_t bus) { return t.shared[i] ? 1 : bus; }

/// Compressed sparse rows: the items of row i are items[start[i],
/// start[i+1]).
struct Rows {
  std::vector<int32_t> start, items;
  template <typename Each> void build(size_t rows, size_t n, Each each) {
    start.assign(rows + 1, 0);
    for (size_t i = 0; i < n; ++i)
      each(i, [&](int32_t row) { ++start[size_t(row) + 1]; });
    for (size_t r = 0; r < rows; ++r)
      start[r + 1] += start[r];
    items.resize(size_t(start[rows]));
    std::vector<int32_t> at(start.begin(), start.end() - 1);
    for (size_t i = 0; i < n; ++i)
      each(i, [&](int32_t row) { items[size_t(at[size_t(row)]++)] = int32_t(i); });
  }
};

} // namespace

std::vector<int32_t> colourTransfers(const std::vector<Transfer> &transfers, int64_t busTiles) {
  const int64_t bus = positive(busTiles);
  const size_t n = transfers.size();
  std::vector<int32_t> round(n, -1);
  if (n == 0)
    return round;

  // The tiles, numbered densely; each transfer's source and destinations
  // by that number.
  std::vector<int64_t> tileIds;
  for (const Transfer &t : transfers) {
    tileIds.push_back(t.src);
    tileIds.insert(tileIds.end(), t.dst.begin(), t.dst.end());
  }
  std::sort(tileIds.begin(), tileIds.end());
  tileIds.erase(std::unique(tileIds.begin(), tileIds.end()), tileIds.end());
  auto idOf = [&](int64_t tile) {
    return int32_t(std::lower_bound(tileIds.begin(), tileIds.end(), tile) - tileIds.begin());
  };
  const size_t tiles = tileIds.size();
  std::vector<int32_t> src(n);
  Rows dst; // per transfer: its destinations' ids, ascending
  dst.start.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    src[i] = idOf(transfers[i].src);
    for (int64_t tile : transfers[i].dst)
      dst.items.push_back(idOf(tile));
    dst.start[i + 1] = int32_t(dst.items.size());
  }
  // The transfers each tile sends and receives.
  Rows sendersAt, receiversAt;
  sendersAt.build(tiles, n, [&](size_t i, auto put) { put(src[i]); });
  receiversAt.build(tiles, n, [&](size_t i, auto put) {
    for (int32_t k = dst.start[i]; k < dst.start[i + 1]; ++k)
      put(dst.items[size_t(k)]);
  });
  // The receive slots of each receiversAt entry (its transfer's at that
  // tile): a transfer receives at a tile once, so the entries of one tile
  // are distinct transfers, in ascending order, as are a transfer's
  // destinations -- one merge per tile finds them.
  std::vector<uint8_t> receiverSlots(receiversAt.items.size());
  {
    std::vector<int32_t> next(dst.start.begin(), dst.start.end() - 1);
    for (size_t tile = 0; tile < tiles; ++tile)
      for (int32_t a = receiversAt.start[tile]; a < receiversAt.start[tile + 1]; ++a) {
        size_t j = size_t(receiversAt.items[size_t(a)]);
        size_t k = size_t(next[j]++ - dst.start[j]); // j's destinations ascend with `tile`
        receiverSlots[size_t(a)] = uint8_t(slotsOn(transfers[j], k, bus));
      }
  }

  // Per round: its longest transfer (bytes); per tile and round: the
  // receive slots it uses (tile-major, `width` rounds wide, widened as
  // rounds open). A tile's sends need no such record: placing a transfer
  // closes its round to every other sender of its source at once.
  std::vector<int64_t> length;
  size_t width = 0;
  std::vector<int64_t> received;
  auto widen = [&](size_t rounds) {
    if (rounds <= width)
      return;
    size_t w = std::max<size_t>(rounds, 2 * width);
    std::vector<int64_t> r(tiles * w, 0);
    for (size_t t = 0; t < tiles; ++t)
      for (size_t k = 0; k < width; ++k)
        r[t * w + k] = received[t * width + k];
    received.swap(r);
    width = w;
  };

  // Per transfer: the rounds closed to it, as bits, and their count (its
  // saturation).
  std::vector<std::vector<uint64_t>> closed(n);
  std::vector<size_t> saturation(n, 0);
  auto isClosed = [&](size_t i, size_t r) {
    return r / 64 < closed[i].size() && (closed[i][r / 64] >> (r % 64) & 1);
  };
  // The queue's entries pack (saturation, then the transfer's rank: the
  // largest first, then the first) into one word, the larger the sooner.
  std::vector<uint32_t> rank(n);
  {
    std::vector<uint32_t> order(n);
    for (size_t i = 0; i < n; ++i)
      order[i] = uint32_t(i);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      return transfers[a].bytes != transfers[b].bytes ? transfers[a].bytes > transfers[b].bytes
                                                      : a < b;
    });
    for (size_t k = 0; k < n; ++k)
      rank[order[k]] = uint32_t(k);
  }
  std::vector<uint32_t> byRank(n);
  for (size_t i = 0; i < n; ++i)
    byRank[rank[i]] = uint32_t(i);
  auto entry = [&](size_t i) {
    return uint64_t(saturation[i]) << 32 | uint64_t(UINT32_MAX - rank[i]);
  };
  std::priority_queue<uint64_t> queue;
  for (size_t i = 0; i < n; ++i)
    queue.push(entry(i));
  auto close = [&](int32_t j, size_t r) {
    std::vector<uint64_t> &bits = closed[size_t(j)];
    if (bits.size() <= r / 64)
      bits.resize(r / 64 + 1, 0);
    uint64_t bit = uint64_t(1) << (r % 64);
    if (bits[r / 64] & bit)
      return;
    bits[r / 64] |= bit;
    ++saturation[size_t(j)];
    queue.push(entry(size_t(j)));
  };

  while (!queue.empty()) {
    const uint64_t top = queue.top();
    queue.pop();
    const size_t i = byRank[UINT32_MAX - uint32_t(top)];
    if (round[i] >= 0 || (top >> 32) != saturation[i])
      continue; // placed already, or a stale entry
    const Transfer &t = transfers[i];
    const int32_t *d = dst.items.data() + dst.start[i], *dEnd = dst.items.data() + dst.start[i + 1];

    // The open round this transfer stretches least: among those it fits
    // without stretching, the shortest; a new round when every open one
    // would stretch by more than the transfer's own length. The rounds it
    // fits are exactly those not closed to it: a round closes to a
    // transfer as soon as a placement on one of its tiles leaves it no room.
    int64_t best = -1, bestStretch = t.bytes, bestLength = 0;
    for (size_t r = 0; r < length.size(); ++r) {
      if (isClosed(i, r))
        continue;
      int64_t stretch = std::max<int64_t>(0, t.bytes - length[r]);
      if (best < 0 ? stretch <= bestStretch
                   : stretch < bestStretch || (stretch == bestStretch && length[r] < bestLength)) {
        best = int64_t(r);
        bestStretch = stretch;
        bestLength = length[r];
      }
    }
    if (best < 0) {
      best = int64_t(length.size());
      length.push_back(0);
      widen(length.size());
    }
    const size_t r = size_t(best);
    round[i] = int32_t(r);
    length[r] = std::max(length[r], t.bytes);
    for (const int32_t *k = d; k != dEnd; ++k)
      received[size_t(*k) * width + r] += slotsOn(t, size_t(k - d), bus);

    // Round r is now closed to every other sender of this source, and to
    // each receiver of its destinations whose slots no longer fit there.
    for (int32_t a = sendersAt.start[size_t(src[i])]; a < sendersAt.start[size_t(src[i]) + 1]; ++a) {
      int32_t j = sendersAt.items[size_t(a)];
      if (round[size_t(j)] < 0)
        close(j, r);
    }
    for (const int32_t *k = d; k != dEnd; ++k) {
      int64_t used = received[size_t(*k) * width + r];
      for (int32_t a = receiversAt.start[size_t(*k)]; a < receiversAt.start[size_t(*k) + 1]; ++a) {
        int32_t j = receiversAt.items[size_t(a)];
        if (round[size_t(j)] < 0 && used + receiverSlots[size_t(a)] > bus)
          close(j, r);
      }
    }
  }
  return round;
}

std::string checkSchedule(const std::vector<Transfer> &transfers,
                          const std::vector<int32_t> &rounds, int64_t busTiles) {
  const int64_t bus = positive(busTiles);
  const size_t n = transfers.size();
  if (rounds.size() != n)
    return "the schedule places " + std::to_string(rounds.size()) + " transfers; the exchange has " +
           std::to_string(n);
  // One record per (round, tile) use, sorted so that the uses of one tile
  // in one round lie together.
  struct Use {
    int32_t round;
    int64_t tile;
    int64_t slots; ///< receive slots; 0 for a send
    size_t transfer;
    bool operator<(const Use &o) const {
      return std::tie(round, tile, slots, transfer) < std::tie(o.round, o.tile, o.slots, o.transfer);
    }
  };
  std::vector<Use> sends, receives;
  for (size_t i = 0; i < n; ++i) {
    const Transfer &t = transfers[i];
    int32_t r = rounds[i];
    if (r < 0 || size_t(r) >= n)
      return "transfer " + std::to_string(i) + " has round " + std::to_string(r) +
             "; the rounds are 0 to " + std::to_string(int64_t(n) - 1);
    sends.push_back({r, t.src, 0, i});
    for (size_t k = 0; k < t.dst.size(); ++k)
      receives.push_back({r, t.dst[k], slotsOn(t, k, bus), i});
  }
  std::sort(sends.begin(), sends.end());
  for (size_t a = 1; a < sends.size(); ++a)
    if (sends[a].round == sends[a - 1].round && sends[a].tile == sends[a - 1].tile)
      return "round " + std::to_string(sends[a].round) + ": tile " + std::to_string(sends[a].tile) +
             " sends transfers " + std::to_string(sends[a - 1].transfer) + " and " +
             std::to_string(sends[a].transfer);
  std::sort(receives.begin(), receives.end());
  int64_t used = 0;
  for (size_t a = 0; a < receives.size(); ++a) {
    bool same = a > 0 && receives[a].round == receives[a - 1].round &&
                receives[a].tile == receives[a - 1].tile;
    used = (same ? used : 0) + receives[a].slots;
    if (used > bus)
      return "round " + std::to_string(receives[a].round) + ": tile " +
             std::to_string(receives[a].tile) + " receives more than its exchange bus holds " +
             "(transfers " + std::to_string(receives[a - 1].transfer) + " and " +
             std::to_string(receives[a].transfer) + ")";
  }
  return "";
}

int64_t scheduleCycles(const std::vector<Transfer> &transfers, const std::vector<int32_t> &rounds,
                       const Facts &facts) {
  std::vector<int64_t> longest;
  for (size_t i = 0; i < transfers.size() && i < rounds.size(); ++i) {
    size_t r = size_t(std::max<int32_t>(0, rounds[i]));
    if (longest.size() <= r)
      longest.resize(r + 1, 0);
    longest[r] = std::max(longest[r], transfers[i].bytes);
  }
  int64_t cycles = 0;
  for (int64_t bytes : longest)
    cycles = satAdd(cycles, cost::exchangeCycles(facts, bytes));
  return cycles;
}

/// The most bytes one tile sends, or receives counting a bus-shared
/// transfer at 1/bus, rounded up.
static int64_t busiestBytes(const std::vector<Transfer> &transfers, int64_t busTiles) {
  // In units of 1/bus byte, so that a shared transfer's share is exact.
  const int64_t bus = positive(busTiles);
  std::unordered_map<int64_t, int64_t> sent, received;
  for (const Transfer &t : transfers) {
    int64_t &s = sent[t.src];
    s = satAdd(s, satMul(t.bytes, bus));
    for (size_t k = 0; k < t.dst.size(); ++k) {
      int64_t &r = received[t.dst[k]];
      r = satAdd(r, satMul(t.bytes, t.shared[k] ? 1 : bus));
    }
  }
  int64_t most = 0;
  for (const auto *m : {&sent, &received})
    for (const auto &tileUnits : *m)
      most = std::max(most, tileUnits.second);
  return ceilDiv(most, bus);
}

int64_t lowerBoundCycles(const std::vector<Transfer> &transfers, const Facts &facts) {
  return cost::exchangeCycles(facts, busiestBytes(transfers, facts.tilesPerExchangeBus));
}

/// Cuts every transfer longer than a packet into packets of near-equal
/// whole words, a packet being the busiest tile's bound load over
/// kPacketsPerBusiestTile, in whole words, and at least kMinPacketBytes.
static std::vector<Transfer> packets(std::vector<Transfer> whole, int64_t bus) {
  const int64_t most = busiestBytes(whole, bus);
  const int64_t packet =
      std::max<int64_t>(kMinPacketBytes, 4 * ceilDiv(ceilDiv(most, kPacketsPerBusiestTile), 4));
  std::vector<Transfer> out;
  out.reserve(whole.size());
  for (Transfer &t : whole) {
    if (t.bytes <= packet) {
      out.push_back(std::move(t));
      continue;
    }
    const int64_t words = ceilDiv(t.bytes, 4), k = ceilDiv(t.bytes, packet);
    int64_t left = t.bytes;
    for (int64_t j = 0; j < k; ++j) {
      Transfer part = t;
      part.bytes = std::min(left, 4 * (words / k + (j < words % k ? 1 : 0)));
      left -= part.bytes;
      out.push_back(std::move(part));
    }
  }
  return out;
}

std::vector<Transfer> exchangeTransfers(const Program &p, const std::vector<TensorLayout> &layouts,
                                        const Exchange &x, int64_t run, int64_t busTiles) {
  const int64_t bus = positive(busTiles), tiles = p.target.tiles;
  std::vector<Transfer> out;
  // (source tile, destination set) -> its transfer. A destination set is a
  // buffer's tile set (interned) or one tensor home tile.
  std::map<std::vector<std::pair<int64_t, int64_t>>, int64_t> setIds;
  std::map<std::tuple<int64_t, bool, int64_t>, size_t> index;

  auto add = [&](int64_t src, bool toSet, int64_t key, const TileSet *set, int64_t bytes) {
    auto [it, fresh] = index.emplace(std::make_tuple(src, toSet, key), out.size());
    if (!fresh) {
      out[it->second].bytes = satAdd(out[it->second].bytes, bytes);
      return;
    }
    Transfer t;
    t.src = src;
    t.bytes = bytes;
    if (!toSet) {
      t.dst = {key};
      t.shared = {false};
    } else {
      forEachTile(*set, [&](int64_t d) { t.dst.push_back(d); });
      for (int64_t d : t.dst) {
        int64_t first = d - d % bus;
        bool whole = bus > 1 && first + bus <= tiles;
        for (int64_t u = first; whole && u < first + bus; ++u)
          whole = set->contains(u);
        t.shared.push_back(whole);
      }
    }
    out.push_back(std::move(t));
  };

  for (const Send &s : x.sends) {
    if (s.count <= 0)
      continue;
    const int64_t width = elemBytes(s.src.isTensor ? p.tensors[size_t(s.src.object)].type
                                                   : p.buffers[size_t(s.src.object)].type);
    int64_t setKey = 0;
    if (!s.dst.isTensor)
      setKey = setIds.emplace(s.dst.tiles.ranges, int64_t(setIds.size())).first->second;
    // Elements [at, at + len) of the destination (counted from its begin)
    // come from tile `src`.
    auto land = [&](int64_t src, int64_t at, int64_t len) {
      if (!s.dst.isTensor) {
        add(src, true, setKey, &s.dst.tiles, satMul(len, width));
        return;
      }
      const Tensor &dt = p.tensors[size_t(s.dst.object)];
      layouts[size_t(s.dst.object)].forEachHome(
          dt, s.dst.begin + at, len,
          [&](int64_t tile, int64_t, int64_t l) { add(src, false, tile, nullptr, satMul(l, width)); });
    };
    if (!s.src.isTensor) {
      land(s.src.tiles.ranges.front().first, 0, s.count);
      continue;
    }
    const Tensor &st = p.tensors[size_t(s.src.object)];
    const int64_t rows = std::max<int64_t>(s.rows, 1), rowLength = s.count / rows;
    const int64_t first = satAdd(s.src.begin, satMul(s.advance, run));
    for (int64_t r = 0; r < rows; ++r) {
      int64_t rowBegin = satAdd(first, satMul(r, s.rowStride));
      layouts[size_t(s.src.object)].forEachHome(
          st, rowBegin, rowLength, [&](int64_t tile, int64_t lo, int64_t len) {
            land(tile, r * rowLength + (lo - rowBegin), len);
          });
    }
  }
  return packets(std::move(out), bus);
}

std::pair<int64_t, std::string> firstBadRun(const Program &p,
                                            const std::vector<TensorLayout> &layouts,
                                            const Exchange &x, int64_t busTiles) {
  for (size_t run = 0; run < x.schedule.size(); ++run) {
    std::string why = checkSchedule(exchangeTransfers(p, layouts, x, int64_t(run), busTiles),
                                    x.schedule[run], busTiles);
    if (!why.empty())
      return {int64_t(run), why};
  }
  return {-1, ""};
}

std::vector<Transfer> exchangeTransfers(const Program &p, const Exchange &x, int64_t run,
                                        const Facts &facts) {
  std::vector<TensorLayout> layouts(p.tensors.size());
  for (const Send &s : x.sends)
    for (const Endpoint *e : {&s.src, &s.dst})
      if (e->isTensor && layouts[size_t(e->object)].tiles.empty())
        layouts[size_t(e->object)] = TensorLayout(p.tensors[size_t(e->object)]);
  return exchangeTransfers(p, layouts, x, run, facts.tilesPerExchangeBus);
}

bool scheduleExchanges(Program &p, std::string &error) {
  std::optional<Facts> facts = factsFor(p.target.arch);
  if (!facts) {
    error = "no facts for target arch '" + p.target.arch + "' to schedule its exchanges by";
    return false;
  }
  std::vector<TensorLayout> layouts;
  layouts.reserve(p.tensors.size());
  for (const Tensor &t : p.tensors)
    layouts.emplace_back(t);
  std::vector<int64_t> runs = copyRuns(p, kMaxStepDepth);
  for (size_t i = 0; i < p.exchanges.size(); ++i) {
    Exchange &x = p.exchanges[i];
    x.schedule.clear();
    int64_t n = advances(x) ? runs[i] : 1;
    for (int64_t run = 0; run < n; ++run)
      x.schedule.push_back(colourTransfers(
          exchangeTransfers(p, layouts, x, run, facts->tilesPerExchangeBus),
          facts->tilesPerExchangeBus));
  }
  return true;
}

} // namespace synpl::ipu21::sim
