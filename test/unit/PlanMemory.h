//===- PlanMemory.h - A plan's memory laid out as the runtime does -*- C++ -*-===//
//
// Shared by the tests that run an l0uop.plan's kernels outside the runtime
// (EndToEndJitTest.cpp, the differential fuzzer's oracle): every pool one
// 256-byte aligned allocation (the most any kernel's `llvm.align`
// promises), every slot at pool + offset, a freelist slot (placed by the
// runtime when the program runs) in an allocation of its own. Persistent
// pools start zeroed; transient memory starts as NaN (all bytes 0xFF), so
// that a kernel reading a slot before its producer wrote it, or a packing
// that overlaps two live slots, shows in the numbers.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_PLANMEMORY_H
#define SYNPL_TEST_UNIT_PLANMEMORY_H

#include "synpl/Dialect/L0UOp/L0UOpOps.h"
#include "synpl/Reference/L1Interpreter.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace synpl::test {

/// A 256-byte aligned allocation of at least `bytes`, filled with `fill`.
struct AlignedBuffer {
  AlignedBuffer(uint64_t bytes, uint8_t fill) {
    uint64_t rounded = std::max<uint64_t>((bytes + 255) / 256 * 256, 256);
    data = static_cast<uint8_t *>(std::aligned_alloc(256, rounded));
    std::memset(data, fill, rounded);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  uint8_t *data;
};

class PlanMemory {
public:
  explicit PlanMemory(l0uop::PlanOp plan) {
    mlir::Block &body = plan.getBody().front();
    for (auto pool : body.getOps<l0uop::PoolOp>())
      pools[pool.getSymName().str()] = std::make_unique<AlignedBuffer>(
          pool.getCapacity(), pool.getKind() == l0uop::PoolKind::persistent ? 0 : 0xFF);
    for (auto slot : body.getOps<l0uop::SlotOp>()) {
      std::string name = slot.getSymName().str();
      types[name] = slot.getBufType();
      if (std::optional<int64_t> offset = slot.getOffset()) {
        addr[name] = pools.at(slot.getPool().str())->data + *offset;
      } else {
        dynamic.push_back(std::make_unique<AlignedBuffer>(slot.getSize(), 0xFF));
        addr[name] = dynamic.back()->data;
      }
    }
  }

  bool has(const std::string &slot) const { return addr.count(slot); }
  /// The slot's address (null: no such slot).
  void *at(const std::string &slot) const {
    auto it = addr.find(slot);
    return it == addr.end() ? nullptr : it->second;
  }
  l0uop::BufType type(const std::string &slot) const { return types.at(slot); }
  size_t bytes(const std::string &slot) const {
    l0uop::BufType t = types.at(slot);
    return t.getNumElements() * elementBytes(t);
  }

  /// Stores `t` into `slot` in the slot's element type (f32, or an
  /// integer's low bytes); false when the element counts differ.
  bool write(const std::string &slot, const ref::Tensor &t) {
    uint8_t *p = static_cast<uint8_t *>(at(slot));
    if (!p || int64_t(types.at(slot).getNumElements()) != t.size())
      return false;
    mlir::Type e = types.at(slot).getElementType();
    unsigned width = elementBytes(types.at(slot));
    for (int64_t i = 0; i < t.size(); ++i) {
      if (e.isF32()) {
        float f = float(t[i]);
        std::memcpy(p + 4 * i, &f, 4);
      } else {
        int64_t x = int64_t(t[i]); // little-endian: the low bytes
        std::memcpy(p + width * i, &x, width);
      }
    }
    return true;
  }

  /// The slot's elements shaped like `like` (flat, of the slot's count,
  /// when the counts differ, so that a comparison reports the shapes).
  ref::Tensor read(const std::string &slot, const ref::Tensor &like) const {
    const uint8_t *p = static_cast<const uint8_t *>(at(slot));
    l0uop::BufType type = types.at(slot);
    int64_t count = int64_t(type.getNumElements());
    ref::Tensor t = count == like.size() ? ref::Tensor(like.getElementType(), like.getShape())
                                         : ref::Tensor(like.getElementType(), {count});
    mlir::Type e = type.getElementType();
    unsigned width = elementBytes(type);
    for (int64_t i = 0; i < count; ++i) {
      if (e.isF32()) {
        float f;
        std::memcpy(&f, p + 4 * i, 4);
        t[i] = f;
      } else {
        uint64_t x = 0;
        std::memcpy(&x, p + width * i, width);
        if (e.getIntOrFloatBitWidth() == 1)
          x &= 1;
        t[i] = double(x);
      }
    }
    return t;
  }

private:
  static unsigned elementBytes(l0uop::BufType t) {
    return std::max(1u, t.getElementType().getIntOrFloatBitWidth() / 8);
  }

  std::map<std::string, std::unique_ptr<AlignedBuffer>> pools;
  std::vector<std::unique_ptr<AlignedBuffer>> dynamic;
  std::map<std::string, void *> addr;
  std::map<std::string, l0uop::BufType> types;
};

} // namespace synpl::test

#endif // SYNPL_TEST_UNIT_PLANMEMORY_H
