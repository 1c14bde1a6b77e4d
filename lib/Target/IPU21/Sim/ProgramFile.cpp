//===- ProgramFile.cpp - Writing and reading ipu21 program files ----------===//
//
// The layout is in ProgramFile.h. The reader is written for hostile input:
// every read is bounds-checked, every count is checked against the bytes
// left before anything is allocated for it (each item takes at least a known
// number of bytes), enums are checked as they are read, recursion is bounded
// by kMaxStepDepth, and the program is then held to checkProgram's rules
// (which check a UOp body's SSA form, nesting and types).
//
// A program is written as the oldest version that holds it: version 4 when
// it has exchanges (their schedules follow the host side), else version 3
// when it has a host side (after main), else version 2 when it has a UOp
// codelet (each followed by its fields and its body), else version 1. So
// every program has exactly one file, and a file read back writes the same
// bytes (the fuzz target relies on it).
//
//===----------------------------------------------------------------------===//
#include "synpl/Target/IPU21/ProgramFile.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace synpl::ipu21::sim {

uint64_t fnv1a64(const void *data, size_t size) {
  const auto *p = static_cast<const uint8_t *>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

namespace {

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// The oldest version that holds `p` (the file comment).
uint32_t formatVersion(const Program &p) {
  if (!p.exchanges.empty())
    return 4;
  if (!p.hostTable.empty())
    return 3;
  for (const Codelet &c : p.codelets)
    if (c.kind == CodeletKind::UOp)
      return 2;
  return kOldestProgramFormatVersion;
}

class Writer {
public:
  std::string out;

  void u8(uint8_t v) { out.push_back(char(v)); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void i32(int32_t v) { le(uint32_t(v), 4); }
  void i64(int64_t v) { le(uint64_t(v), 8); }
  void boolean(bool v) { u8(v ? 1 : 0); }
  void str(const std::string &s) {
    u32(uint32_t(s.size()));
    out.append(s);
  }
  void tiles(const TileSet &s) {
    u64(s.ranges.size());
    for (const auto &r : s.ranges) {
      i64(r.first);
      i64(r.second);
    }
  }
  void endpoint(const Endpoint &e) {
    boolean(e.isTensor);
    i32(e.object);
    i64(e.begin);
    tiles(e.tiles);
  }
  void uopBody(const Codelet &c) {
    u64(c.uopFields.size());
    for (const UOpField &f : c.uopFields) {
      str(f.name);
      u8(uint8_t(f.type));
      u64(f.shape.size());
      for (int64_t d : f.shape)
        i64(d);
      boolean(f.output);
    }
    u64(c.uop.size());
    for (const UInst &u : c.uop) {
      u8(uint8_t(u.op));
      u8(uint8_t(u.type));
      u8(uint8_t(u.srcType));
      for (int32_t r : {u.a, u.b, u.c, u.field})
        i32(r);
      u64(u.indices.size());
      for (int32_t r : u.indices)
        i32(r);
      i64(u.lo);
      i64(u.hi);
      i64(u.step);
      i32(u.par);
      uint64_t bits;
      std::memcpy(&bits, &u.fimm, sizeof(bits)); // every bit, NaN payloads too
      u64(bits);
      i64(u.iimm);
    }
  }
  void step(const Step &s) {
    u8(uint8_t(s.kind));
    i64(s.count);
    i32(s.ref);
    str(s.stream);
    u64(s.body.size());
    for (const Step &b : s.body)
      step(b);
    u64(s.elseBody.size());
    for (const Step &b : s.elseBody)
      step(b);
  }

  void program(const Program &p) {
    str(p.name);
    const Target &t = p.target;
    str(t.arch);
    for (int64_t v : {t.tiles, t.bytesPerTile, t.elementBytes, t.workers, t.clockHz, t.sramBase,
                      t.execEnd, t.interleavedBegin, t.sramEnd, t.rptCountMax})
      i64(v);
    u64(p.tensors.size());
    for (const Tensor &x : p.tensors) {
      str(x.name);
      u8(uint8_t(x.type));
      u64(x.shape.size());
      for (int64_t d : x.shape)
        i64(d);
      u64(x.mapping.size());
      for (const Interval &iv : x.mapping) {
        i64(iv.tile);
        i64(iv.begin);
        i64(iv.end);
      }
      i64(x.address);
    }
    u64(p.buffers.size());
    for (const Buffer &b : p.buffers) {
      str(b.name);
      u8(uint8_t(b.type));
      tiles(b.tiles);
      i64(b.elements);
      i64(b.address);
    }
    u64(p.codelets.size());
    for (const Codelet &c : p.codelets) {
      str(c.name);
      u8(uint8_t(c.kind));
      u8(uint8_t(c.inType));
      u8(uint8_t(c.outType));
      i64(c.codeBytes);
      i64(c.address);
      if (c.kind == CodeletKind::UOp)
        uopBody(c);
    }
    u64(p.computeSets.size());
    for (const ComputeSet &cs : p.computeSets) {
      str(cs.name);
      u64(cs.vertices.size());
      for (const Vertex &v : cs.vertices) {
        i32(v.codelet);
        tiles(v.tiles);
        u64(v.fields.size());
        for (const FieldRef &f : v.fields) {
          boolean(f.isTensor);
          i32(f.object);
          i64(f.offset);
          i64(f.count);
        }
        u64(v.params.size());
        for (int64_t q : v.params)
          i64(q);
        i64(v.stateAddress);
        i64(v.stateBytes);
      }
    }
    u64(p.exchanges.size());
    for (const Exchange &x : p.exchanges) {
      str(x.name);
      u64(x.sends.size());
      for (const Send &s : x.sends) {
        endpoint(s.src);
        endpoint(s.dst);
        i64(s.count);
        i64(s.rows);
        i64(s.rowStride);
        i64(s.advance);
      }
      i64(x.descriptorAddress);
      i64(x.descriptorBytes);
    }
    step(p.main);
    uint32_t version = formatVersion(p);
    if (version < 3)
      return; // versions 1 and 2 end here
    u64(p.hostTable.size());
    for (int64_t w : p.hostTable)
      i64(w);
    if (!p.hostTable.empty())
      str(p.hostStrings);
    if (version < 4)
      return;
    for (const Exchange &x : p.exchanges) {
      u64(x.schedule.size());
      for (const std::vector<int32_t> &rounds : x.schedule) {
        u64(rounds.size());
        for (int32_t r : rounds)
          i32(r);
      }
    }
  }

private:
  void le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
      out.push_back(char(uint8_t(v >> (8 * i))));
  }
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

// The fewest bytes one item of each vector takes in the payload.
constexpr size_t kTileRangeBytes = 16, kIntervalBytes = 24, kDimBytes = 8, kParamBytes = 8;
constexpr size_t kStringBytes = 4, kTileSetBytes = 8;
constexpr size_t kTensorBytes = kStringBytes + 1 + 8 + 8 + 8;
constexpr size_t kBufferBytes = kStringBytes + 1 + kTileSetBytes + 8 + 8;
constexpr size_t kCodeletBytes = kStringBytes + 3 + 8 + 8;
constexpr size_t kFieldBytes = 1 + 4 + 8 + 8;
constexpr size_t kVertexBytes = 4 + kTileSetBytes + 8 + 8 + 8 + 8;
constexpr size_t kComputeSetBytes = kStringBytes + 8;
constexpr size_t kEndpointBytes = 1 + 4 + 8 + kTileSetBytes;
constexpr size_t kSendBytes = 2 * kEndpointBytes + 4 * 8;
constexpr size_t kExchangeBytes = kStringBytes + 8 + 8 + 8;
constexpr size_t kStepBytes = 1 + 8 + 4 + kStringBytes + 8 + 8;
constexpr size_t kUOpFieldBytes = kStringBytes + 1 + 8 + 1;
constexpr size_t kUInstBytes = 3 + 4 * 4 + 8 + 3 * 8 + 4 + 8 + 8;
constexpr size_t kRegisterBytes = 4;

class Reader {
public:
  Reader(const uint8_t *data, size_t size, uint32_t version, std::string &error)
      : base(data), p(data), left(size), version(version), error(error) {}

  bool done() {
    if (left == 0)
      return true;
    return fail("the payload has " + std::to_string(left) + " bytes after the program");
  }

  bool program(Program &out) {
    if (!str(out.name, "the program name") || !str(out.target.arch, "the target arch"))
      return false;
    Target &t = out.target;
    for (int64_t *v : {&t.tiles, &t.bytesPerTile, &t.elementBytes, &t.workers, &t.clockHz,
                       &t.sramBase, &t.execEnd, &t.interleavedBegin, &t.sramEnd, &t.rptCountMax})
      if (!i64(*v, "the target"))
        return false;
    if (!(tensors(out) && buffers(out) && codelets(out) && computeSets(out) &&
          exchanges(out) && step(out.main, 1, "main")))
      return false;
    if (version < 3)
      return true;
    size_t words = 0;
    if (!count(words, 8, "the host tables"))
      return false;
    if (words == 0 && version == 3)
      return fail("a version 3 file has no host tables (such a program is written as "
                  "version 1 or 2)");
    out.hostTable.resize(words);
    for (int64_t &w : out.hostTable)
      if (!i64(w, "the host tables"))
        return false;
    if (words > 0 && !str(out.hostStrings, "the host strings"))
      return false;
    if (version < 4)
      return true;
    if (out.exchanges.empty())
      return fail("a version 4 file has no exchanges (such a program is written as version 1, "
                  "2 or 3)");
    for (Exchange &x : out.exchanges) {
      size_t runs = 0;
      if (!count(runs, 8, "an exchange's schedule"))
        return false;
      x.schedule.resize(runs);
      for (std::vector<int32_t> &rounds : x.schedule) {
        size_t n = 0;
        if (!count(n, 4, "an exchange's rounds"))
          return false;
        rounds.resize(n);
        for (int32_t &r : rounds)
          if (!i32(r, "an exchange's rounds"))
            return false;
      }
    }
    return true;
  }

private:
  const uint8_t *base, *p;
  size_t left;
  uint32_t version;
  std::string &error;

  bool fail(std::string msg) {
    error = std::move(msg);
    return false;
  }
  bool need(size_t n, const char *what) {
    if (n <= left)
      return true;
    return fail(std::string("the payload ends inside ") + what + " (at byte " +
                std::to_string(p - base) + ", " + std::to_string(n) + " bytes needed, " +
                std::to_string(left) + " left)");
  }
  uint64_t take(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i)
      v |= uint64_t(p[i]) << (8 * i);
    p += n;
    left -= n;
    return v;
  }
  bool u8(uint8_t &v, const char *what) {
    if (!need(1, what))
      return false;
    v = uint8_t(take(1));
    return true;
  }
  bool i32(int32_t &v, const char *what) {
    if (!need(4, what))
      return false;
    v = int32_t(uint32_t(take(4)));
    return true;
  }
  bool i64(int64_t &v, const char *what) {
    if (!need(8, what))
      return false;
    v = int64_t(take(8));
    return true;
  }
  bool boolean(bool &v, const char *what) {
    uint8_t b = 0;
    if (!u8(b, what))
      return false;
    if (b > 1)
      return fail(std::string(what) + ": a flag is " + std::to_string(b) + ", not 0 or 1");
    v = b == 1;
    return true;
  }
  /// An enum stored as a byte, at most `max`.
  template <typename E> bool enumeration(E &v, uint8_t max, const char *what) {
    uint8_t b = 0;
    if (!u8(b, what))
      return false;
    if (b > max)
      return fail(std::string(what) + ": value " + std::to_string(b) + " is not one of 0.." +
                  std::to_string(max));
    v = static_cast<E>(b);
    return true;
  }
  bool elem(ElemType &v, const char *what) { return enumeration(v, uint8_t(ElemType::U8), what); }
  bool str(std::string &s, const char *what) {
    if (!need(4, what))
      return false;
    size_t n = size_t(take(4));
    if (!need(n, what))
      return false;
    s.assign(reinterpret_cast<const char *>(p), n);
    p += n;
    left -= n;
    return true;
  }
  /// A vector's count, each item taking at least `itemBytes`.
  bool count(size_t &n, size_t itemBytes, const char *what) {
    if (!need(8, what))
      return false;
    uint64_t c = take(8);
    if (c > left / itemBytes)
      return fail(std::string(what) + ": a count of " + std::to_string(c) +
                  " items cannot fit in the " + std::to_string(left) + " bytes left");
    n = size_t(c);
    return true;
  }
  bool tiles(TileSet &s, const char *what) {
    size_t n = 0;
    if (!count(n, kTileRangeBytes, what))
      return false;
    s.ranges.resize(n);
    for (auto &r : s.ranges)
      if (!i64(r.first, what) || !i64(r.second, what))
        return false;
    return true;
  }
  bool endpoint(Endpoint &e, const char *what) {
    return boolean(e.isTensor, what) && i32(e.object, what) && i64(e.begin, what) &&
           tiles(e.tiles, what);
  }

  bool tensors(Program &out) {
    size_t n = 0;
    if (!count(n, kTensorBytes, "the tensors"))
      return false;
    out.tensors.resize(n);
    for (Tensor &x : out.tensors) {
      const char *what = "a tensor";
      size_t dims = 0, intervals = 0;
      if (!str(x.name, what) || !elem(x.type, what) || !count(dims, kDimBytes, what))
        return false;
      x.shape.resize(dims);
      for (int64_t &d : x.shape)
        if (!i64(d, what))
          return false;
      if (!count(intervals, kIntervalBytes, what))
        return false;
      x.mapping.resize(intervals);
      for (Interval &iv : x.mapping)
        if (!i64(iv.tile, what) || !i64(iv.begin, what) || !i64(iv.end, what))
          return false;
      if (!i64(x.address, what))
        return false;
    }
    return true;
  }

  bool buffers(Program &out) {
    size_t n = 0;
    if (!count(n, kBufferBytes, "the buffers"))
      return false;
    out.buffers.resize(n);
    for (Buffer &b : out.buffers) {
      const char *what = "a buffer";
      if (!str(b.name, what) || !elem(b.type, what) || !tiles(b.tiles, what) ||
          !i64(b.elements, what) || !i64(b.address, what))
        return false;
    }
    return true;
  }

  bool codelets(Program &out) {
    size_t n = 0;
    if (!count(n, kCodeletBytes, "the codelets"))
      return false;
    out.codelets.resize(n);
    // Version 1 files predate the UOp codelet.
    const uint8_t maxKind = uint8_t(version == 1 ? CodeletKind::Fill : CodeletKind::UOp);
    bool anyUOp = false;
    for (Codelet &c : out.codelets) {
      const char *what = "a codelet";
      if (!str(c.name, what) || !enumeration(c.kind, maxKind, "a codelet's kind") ||
          !elem(c.inType, what) || !elem(c.outType, what) || !i64(c.codeBytes, what) ||
          !i64(c.address, what))
        return false;
      if (c.kind == CodeletKind::UOp) {
        anyUOp = true;
        if (!uopBody(c))
          return false;
      }
    }
    if (version == 2 && !anyUOp)
      return fail("a version " + std::to_string(version) +
                  " file holds no UOp codelet (such a program is written as version 1)");
    return true;
  }

  bool uopBody(Codelet &c) {
    size_t fields = 0, insts = 0;
    if (!count(fields, kUOpFieldBytes, "a UOp codelet's fields"))
      return false;
    c.uopFields.resize(fields);
    for (UOpField &f : c.uopFields) {
      const char *what = "a UOp field";
      size_t dims = 0;
      if (!str(f.name, what) || !elem(f.type, what) || !count(dims, kDimBytes, what))
        return false;
      f.shape.resize(dims);
      for (int64_t &d : f.shape)
        if (!i64(d, what))
          return false;
      if (!boolean(f.output, what))
        return false;
    }
    if (!count(insts, kUInstBytes, "a UOp codelet's body"))
      return false;
    c.uop.resize(insts);
    for (UInst &u : c.uop) {
      const char *what = "a UOp";
      size_t indices = 0;
      int64_t bits = 0;
      if (!enumeration(u.op, uint8_t(UOpcode::Reduce), "a UOp's opcode") ||
          !enumeration(u.type, uint8_t(UType::U64), "a UOp's type") ||
          !enumeration(u.srcType, uint8_t(UType::U64), "a UOp's source type") ||
          !i32(u.a, what) || !i32(u.b, what) || !i32(u.c, what) || !i32(u.field, what) ||
          !count(indices, kRegisterBytes, what))
        return false;
      u.indices.resize(indices);
      for (int32_t &r : u.indices)
        if (!i32(r, what))
          return false;
      if (!i64(u.lo, what) || !i64(u.hi, what) || !i64(u.step, what) || !i32(u.par, what) ||
          !i64(bits, what) || !i64(u.iimm, what))
        return false;
      std::memcpy(&u.fimm, &bits, sizeof(bits));
    }
    return true;
  }

  bool computeSets(Program &out) {
    size_t n = 0;
    if (!count(n, kComputeSetBytes, "the compute sets"))
      return false;
    out.computeSets.resize(n);
    for (ComputeSet &cs : out.computeSets) {
      size_t vertices = 0;
      if (!str(cs.name, "a compute set") || !count(vertices, kVertexBytes, "a compute set"))
        return false;
      cs.vertices.resize(vertices);
      for (Vertex &v : cs.vertices) {
        const char *what = "a vertex";
        size_t fields = 0, params = 0;
        if (!i32(v.codelet, what) || !tiles(v.tiles, what) || !count(fields, kFieldBytes, what))
          return false;
        v.fields.resize(fields);
        for (FieldRef &f : v.fields)
          if (!boolean(f.isTensor, what) || !i32(f.object, what) || !i64(f.offset, what) ||
              !i64(f.count, what))
            return false;
        if (!count(params, kParamBytes, what))
          return false;
        v.params.resize(params);
        for (int64_t &q : v.params)
          if (!i64(q, what))
            return false;
        if (!i64(v.stateAddress, what) || !i64(v.stateBytes, what))
          return false;
      }
    }
    return true;
  }

  bool exchanges(Program &out) {
    size_t n = 0;
    if (!count(n, kExchangeBytes, "the exchanges"))
      return false;
    out.exchanges.resize(n);
    for (Exchange &x : out.exchanges) {
      const char *what = "an exchange";
      size_t sends = 0;
      if (!str(x.name, what) || !count(sends, kSendBytes, what))
        return false;
      x.sends.resize(sends);
      for (Send &s : x.sends)
        if (!endpoint(s.src, "a send") || !endpoint(s.dst, "a send") || !i64(s.count, "a send") ||
            !i64(s.rows, "a send") || !i64(s.rowStride, "a send") || !i64(s.advance, "a send"))
          return false;
      if (!i64(x.descriptorAddress, what) || !i64(x.descriptorBytes, what))
        return false;
    }
    return true;
  }

  bool step(Step &s, int depth, const char *what) {
    if (depth > kMaxStepDepth)
      return fail("steps nest deeper than " + std::to_string(kMaxStepDepth));
    size_t body = 0, elseBody = 0;
    if (!enumeration(s.kind, uint8_t(StepKind::StreamOut), "a step's kind") ||
        !i64(s.count, what) || !i32(s.ref, what) || !str(s.stream, what) ||
        !count(body, kStepBytes, what))
      return false;
    s.body.resize(body);
    for (Step &b : s.body)
      if (!step(b, depth + 1, "a step"))
        return false;
    if (!count(elseBody, kStepBytes, what))
      return false;
    s.elseBody.resize(elseBody);
    for (Step &b : s.elseBody)
      if (!step(b, depth + 1, "a step"))
        return false;
    return true;
  }
};

uint64_t readLE(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t(p[i]) << (8 * i);
  return v;
}

} // namespace

std::string writeProgram(const Program &program) {
  Writer payload;
  payload.program(program);
  Writer file;
  file.out.append(kProgramMagic, sizeof(kProgramMagic));
  file.u32(formatVersion(program));
  file.u32(0);
  file.u64(payload.out.size());
  file.u64(fnv1a64(payload.out.data(), payload.out.size()));
  file.out += payload.out;
  return file.out;
}

bool readProgram(const void *data, size_t size, Program &out, std::string &error) {
  const auto *bytes = static_cast<const uint8_t *>(data);
  auto fail = [&](std::string msg) {
    error = std::move(msg);
    return false;
  };
  if (size < sizeof(kProgramMagic) || std::memcmp(bytes, kProgramMagic, sizeof(kProgramMagic)))
    return fail("not an ipu21 program file (no \"SYNIPU21\" magic)");
  if (size < kProgramHeaderBytes)
    return fail("program file is truncated: " + std::to_string(size) + " bytes, the header has " +
                std::to_string(kProgramHeaderBytes));
  uint64_t version = readLE(bytes + 8, 4), reserved = readLE(bytes + 12, 4);
  uint64_t payload = readLE(bytes + 16, 8), checksum = readLE(bytes + 24, 8);
  if (version < kOldestProgramFormatVersion || version > kProgramFormatVersion)
    return fail("program format version " + std::to_string(version) +
                "; this simulator reads versions " +
                std::to_string(kOldestProgramFormatVersion) + " to " +
                std::to_string(kProgramFormatVersion));
  if (reserved != 0)
    return fail("program file header: reserved field is " + std::to_string(reserved) +
                ", not 0");
  size_t have = size - kProgramHeaderBytes;
  if (payload > have)
    return fail("program file is truncated: the header promises " + std::to_string(payload) +
                " payload bytes, the file has " + std::to_string(have));
  if (payload < have)
    return fail("program file has " + std::to_string(have - payload) +
                " bytes after its payload of " + std::to_string(payload));
  const uint8_t *body = bytes + kProgramHeaderBytes;
  uint64_t sum = fnv1a64(body, have);
  if (sum != checksum) {
    char msg[128];
    std::snprintf(msg, sizeof(msg),
                  "program file checksum mismatch: header 0x%016llx, payload 0x%016llx",
                  (unsigned long long)checksum, (unsigned long long)sum);
    return fail(msg);
  }
  out = Program();
  Reader reader(body, have, uint32_t(version), error);
  if (!reader.program(out) || !reader.done())
    return false;
  return checkProgram(out, error);
}

bool saveProgram(const std::string &path, const Program &program, std::string &error) {
  std::string bytes = writeProgram(program);
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok)
    error = "cannot write '" + path + "'";
  return ok;
}

bool loadProgram(const std::string &path, Program &out, std::string &error) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  std::string bytes;
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    bytes.append(chunk, n);
  bool readError = std::ferror(f) != 0;
  std::fclose(f);
  if (readError) {
    error = "cannot read '" + path + "'";
    return false;
  }
  if (!readProgram(bytes.data(), bytes.size(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

} // namespace synpl::ipu21::sim
