//===- UOpInterp.cpp - Running a generic (UOp) codelet --------------------===//
//
// An interpreter over a body checkUOpCodelet accepted (so every operand is
// a register written earlier and still valid, and every Range and If has
// its closer). Each UOp's register holds a double (f32, f16) or an int64
// (the integers, wrapped to their width; i1, ui8 and ui32 are kept
// unsigned, ui64 as its bit pattern, which division, remainder, comparison,
// maximum and conversion to a float read as unsigned).
//
// Floats are computed in double and rounded to their type after every op,
// which for add, mul, reciprocal and sqrt of f32 or f16 operands is the
// correctly rounded result (a double has more than twice their precision
// plus two bits, so rounding twice is innocuous). MulAcc is fused: its sum
// is rounded to odd in double first, which makes the second rounding
// exact too. Exp2, Log2 and Sin take the host's libm in double.
//
// Each executed UOp adds its issue slots (Cost.h) to UOpRun::issued: the
// simulator charges the vertex from that count, as it ran. runUOpVertex
// runs a vertex as its tile's workers do (a MultiVertex): the body once per
// worker part, each part's slots counted apart (UOpRun::parts).
//
//===----------------------------------------------------------------------===//
#include "UOp.h"

#include "Cost.h"
#include "Names.h"
#include "Numbers.h"

#include "synpl/Target/IPU21/Simulator.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace synpl::ipu21::sim {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

/// `v` rounded to the float type `t`.
double roundFloat(UType t, double v) {
  if (t == UType::F32)
    return double(float(v));
  return roundToElem(ElemType::F16, v);
}

/// `v` wrapped to the width of the integer type `t`.
int64_t wrap(UType t, uint64_t v) {
  switch (t) {
  case UType::I1:
    return int64_t(v & 1);
  case UType::I8:
    return int64_t(int8_t(uint8_t(v)));
  case UType::U8:
    return int64_t(uint8_t(v));
  case UType::I32:
    return int64_t(int32_t(uint32_t(v)));
  case UType::U32:
    return int64_t(uint32_t(v));
  default:
    return int64_t(v);
  }
}

/// `v` truncated toward zero and saturated to the integer type `t` (NaN
/// becomes 0): a float that does not fit is clamped, never undefined.
int64_t truncSat(UType t, double v) {
  if (std::isnan(v))
    return 0;
  if (t == UType::U64) {
    // 2^64 is an exact double; UINT64_MAX is not.
    v = std::trunc(v);
    if (v <= 0)
      return 0;
    return v >= 18446744073709551616.0 ? int64_t(UINT64_MAX) : int64_t(uint64_t(v));
  }
  int64_t lo, hi;
  intRange(t, lo, hi);
  v = std::trunc(v);
  // -2^63 and 2^63 are exact doubles; INT64_MAX is not.
  if (v <= double(lo))
    return lo;
  if (v >= 9223372036854775808.0 || v >= double(hi))
    return hi;
  return int64_t(v);
}

/// The integer `v` of type `from` as the float type `t`, rounded once (a
/// ui64 read as unsigned).
double intToFloat(UType t, UType from, int64_t v) {
  if (from == UType::U64) {
    uint64_t u = uint64_t(v);
    if (t == UType::F32)
      return double(float(u));
    // Via f32 would round twice; a ui64 above 2^53 is far beyond f16.
    return roundToElem(ElemType::F16, double(u));
  }
  if (t == UType::F32)
    return double(float(v));
  return roundToElem(ElemType::F16, double(v));
}

/// IEEE maximum: NaN if either is NaN; +0 above -0.
double maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::nan("");
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// a * b + c for f32 or f16 operands (a * b is then exact in double), the
/// sum rounded to odd: of the two doubles around the exact sum, the one
/// whose last bit is 1. Rounding that to a format at least two bits
/// narrower gives the correctly rounded fused result.
double fmaToOdd(double a, double b, double c) {
  double p = a * b, s = p + c;
  if (!std::isfinite(s) || !std::isfinite(p) || !std::isfinite(c))
    return s;
  double bb = s - p, e = (p - (s - bb)) + (c - bb); // TwoSum: s + e == p + c
  if (e != 0) {
    uint64_t bits;
    std::memcpy(&bits, &s, sizeof(bits));
    if ((bits & 1) == 0)
      s = std::nextafter(s, e > 0 ? INFINITY : -INFINITY);
  }
  return s;
}

bool isFloatElem(ElemType t) { return t != ElemType::I32 && t != ElemType::U8; }

/// A field's window box: per dimension its first index, extent and the
/// row-major stride of the box.
struct Window {
  std::vector<int64_t> lo, ext, stride;
};

class Interpreter {
public:
  Interpreter(const Codelet &c, const std::vector<int64_t> &params,
              const std::vector<std::vector<double> *> &fields, int64_t maxSteps, UOpRun &run,
              std::string &error)
      : c(c), body(c.uop), params(params), fields(fields), maxSteps(maxSteps), run(run),
        error(error) {}

  bool execute() {
    prepare();
    const int32_t n = int32_t(body.size());
    int32_t pc = 0;
    while (pc < n) {
      // An Index's work grows with its rank, which its slots count too.
      run.steps = satAdd(run.steps, satAdd(1, slots[pc]));
      if (run.steps > maxSteps)
        return fail("ran past " + str(maxSteps) +
                    " UOps and issue slots on one tile (SimOptions::maxUOpSteps): a loop "
                    "that does not end?");
      ++run.executed;
      run.issued = satAdd(run.issued, slots[pc]);
      const UInst &u = body[pc];
      switch (u.op) {
      case UOpcode::Range: {
        int64_t lo = u.lo, hi = u.hi;
        if (u.par >= 0)
          lo = params[2 * size_t(u.par)], hi = params[2 * size_t(u.par) + 1];
        rangeHi[pc] = hi;
        for (int32_t r : reducesOf[pc]) // each accumulator starts as its c
          accF[r] = fv[body[r].c], accI[r] = iv[body[r].c];
        if (lo >= hi) {
          pc = closer[pc] + 1; // past its End: the body runs no time
          continue;
        }
        iv[pc] = lo;
        break;
      }
      case UOpcode::End: {
        const int32_t r = u.a;
        for (int32_t red : reducesOf[r]) {
          fold(red);
          run.issued = satAdd(run.issued, 1); // each fold is an instruction of the body
        }
        int64_t next;
        if (!__builtin_add_overflow(iv[r], body[r].step, &next) && next < rangeHi[r]) {
          iv[r] = next;
          pc = r + 1;
          continue;
        }
        break;
      }
      case UOpcode::If:
        if (iv[u.a] == 0) {
          pc = closer[pc] + 1;
          continue;
        }
        break;
      case UOpcode::EndIf:
        break;
      case UOpcode::Reduce: // its accumulator holds the result
        fv[pc] = accF[pc], iv[pc] = accI[pc];
        break;
      default:
        if (!compute(pc))
          return false;
        break;
      }
      ++pc;
    }
    return true;
  }

private:
  const Codelet &c;
  const std::vector<UInst> &body;
  const std::vector<int64_t> &params;
  const std::vector<std::vector<double> *> &fields;
  const int64_t maxSteps;
  UOpRun &run;
  std::string &error;

  /// Registers: floats in fv, integers in iv, by the UOp's type.
  std::vector<double> fv;
  std::vector<int64_t> iv;
  /// Per Range or If the UOp that closes it; per Range its Reduces and the
  /// end of its current run; per Reduce its accumulator.
  std::vector<int32_t> closer;
  std::vector<std::vector<int32_t>> reducesOf;
  std::vector<int64_t> rangeHi;
  std::vector<double> accF;
  std::vector<int64_t> accI;
  std::vector<int64_t> slots;
  std::vector<Window> windows;

  bool fail(std::string msg) {
    error = "codelet " + quoteName(c.name) + ": " + std::move(msg);
    return false;
  }
  std::string at(int32_t pc) const {
    return "UOp " + str(pc) + " (" + uopName(body[pc].op) + ")";
  }
  std::string fieldName(int32_t f) const {
    return "field " + str(f) + " " + quoteName(c.uopFields[f].name);
  }

  void prepare() {
    const size_t n = body.size();
    fv.assign(n, 0);
    iv.assign(n, 0);
    closer.assign(n, -1);
    reducesOf.assign(n, {});
    rangeHi.assign(n, 0);
    accF.assign(n, 0);
    accI.assign(n, 0);
    slots.resize(n);
    std::vector<int32_t> open;
    for (size_t i = 0; i < n; ++i) {
      const UInst &u = body[i];
      slots[i] = uopIssueSlots(u);
      if (u.op == UOpcode::Range || u.op == UOpcode::If)
        open.push_back(int32_t(i));
      else if (u.op == UOpcode::End || u.op == UOpcode::EndIf) {
        closer[open.back()] = int32_t(i);
        open.pop_back();
      } else if (u.op == UOpcode::Reduce)
        reducesOf[u.b].push_back(int32_t(i));
    }
    // The windows follow the parallel ranges' [lo, hi) pairs in the params.
    size_t q = 2 * uopParallelRanges(c).size();
    windows.resize(c.uopFields.size());
    for (size_t f = 0; f < c.uopFields.size(); ++f) {
      Window &w = windows[f];
      size_t rank = c.uopFields[f].shape.size();
      w.lo.resize(rank);
      w.ext.resize(rank);
      w.stride.resize(rank);
      for (size_t d = 0; d < rank; ++d, q += 2)
        w.lo[d] = params[q], w.ext[d] = params[q + 1];
      int64_t stride = 1;
      for (size_t d = rank; d-- > 0;) {
        w.stride[d] = stride;
        stride *= w.ext[d]; // the box fits in 2^40 elements (checkProgram)
      }
    }
  }

  /// Reduce `r`'s accumulator op= its folded register.
  void fold(int32_t r) {
    const UInst &u = body[r];
    if (isFloatUType(u.type)) {
      double a = accF[r], b = fv[u.a];
      accF[r] = u.iimm == 0 ? roundFloat(u.type, a + b)
                : u.iimm == 1 ? roundFloat(u.type, a * b)
                              : maximum(a, b);
      return;
    }
    int64_t a = accI[r], b = iv[u.a];
    accI[r] = u.iimm == 0 ? wrap(u.type, uint64_t(a) + uint64_t(b))
              : u.iimm == 1 ? wrap(u.type, uint64_t(a) * uint64_t(b))
                            : std::max(a, b);
  }

  /// The offset `off` as an element of field `f`.
  bool element(int32_t pc, int32_t f, int64_t off, size_t &out) {
    size_t size = fields[f]->size();
    if (off < 0 || uint64_t(off) >= size)
      return fail(at(pc) + ": offset " + str(off) + " is outside " + fieldName(f) + "'s " +
                  str(int64_t(size)) + " elements");
    out = size_t(off);
    return true;
  }

  /// The field element `x` of element type `from` as a register of `to`.
  static void load(ElemType from, double x, UType to, double &f, int64_t &i) {
    if (isFloatUType(to))
      f = roundFloat(to, x);
    else if (to == UType::I1)
      i = x != 0;
    else if (isFloatElem(from))
      i = truncSat(to, x);
    else
      i = wrap(to, uint64_t(int64_t(x))); // an exact i32 or ui8
  }

  /// A register of type `from` as an element of type `to`.
  static double store(UType from, double f, int64_t i, ElemType to) {
    if (isFloatUType(from))
      return roundToElem(to, f); // ints truncate and saturate (roundToElem)
    if (to == ElemType::F32)
      return double(float(i));
    if (to == ElemType::I32)
      return double(int32_t(uint32_t(uint64_t(i))));
    if (to == ElemType::U8)
      return double(uint8_t(uint64_t(i)));
    return roundToElem(to, double(i));
  }

  bool index(int32_t pc) {
    const UInst &u = body[pc];
    const Window &w = windows[u.field];
    int64_t off = 0;
    for (size_t d = 0; d < u.indices.size(); ++d) {
      int64_t x = iv[u.indices[d]];
      if (x < w.lo[d] || x - w.lo[d] >= w.ext[d])
        return fail(at(pc) + ": " + fieldName(u.field) + " dimension " + str(int64_t(d)) +
                    ": index " + str(x) + " is outside the window [" + str(w.lo[d]) + ", " +
                    str(w.lo[d] + w.ext[d]) + ")");
      off += (x - w.lo[d]) * w.stride[d];
    }
    iv[pc] = wrap(u.type, uint64_t(off));
    return true;
  }

  bool compute(int32_t pc) {
    const UInst &u = body[pc];
    const bool fl = isFloatUType(u.type);
    double &F = fv[pc];
    int64_t &I = iv[pc];
    switch (u.op) {
    case UOpcode::Const:
      if (fl)
        F = roundFloat(u.type, u.fimm);
      else
        I = wrap(u.type, uint64_t(u.iimm));
      return true;
    case UOpcode::Index:
      return index(pc);
    case UOpcode::Load: {
      size_t e;
      if (!element(pc, u.field, iv[u.a], e))
        return false;
      load(c.uopFields[u.field].type, (*fields[u.field])[e], u.type, F, I);
      return true;
    }
    case UOpcode::Store: {
      size_t e;
      if (!element(pc, u.field, iv[u.a], e))
        return false;
      (*fields[u.field])[e] = store(u.type, fv[u.b], iv[u.b], c.uopFields[u.field].type);
      return true;
    }
    case UOpcode::Add:
      if (fl)
        F = roundFloat(u.type, fv[u.a] + fv[u.b]);
      else
        I = wrap(u.type, uint64_t(iv[u.a]) + uint64_t(iv[u.b]));
      return true;
    case UOpcode::Mul:
      if (fl)
        F = roundFloat(u.type, fv[u.a] * fv[u.b]);
      else
        I = wrap(u.type, uint64_t(iv[u.a]) * uint64_t(iv[u.b]));
      return true;
    case UOpcode::MulAcc:
      if (fl)
        F = roundFloat(u.type, fmaToOdd(fv[u.a], fv[u.b], fv[u.c]));
      else
        I = wrap(u.type, uint64_t(iv[u.a]) * uint64_t(iv[u.b]) + uint64_t(iv[u.c]));
      return true;
    case UOpcode::Neg:
      if (fl)
        F = -fv[u.a];
      else
        I = wrap(u.type, uint64_t(0) - uint64_t(iv[u.a]));
      return true;
    case UOpcode::Max:
      if (fl)
        F = maximum(fv[u.a], fv[u.b]);
      else if (u.type == UType::U64)
        I = int64_t(std::max(uint64_t(iv[u.a]), uint64_t(iv[u.b])));
      else
        I = std::max(iv[u.a], iv[u.b]);
      return true;
    case UOpcode::Reciprocal:
      F = roundFloat(u.type, 1.0 / fv[u.a]);
      return true;
    case UOpcode::Exp2: {
      // Results below the smallest normal number are flushed to zero, as
      // the host lowering's exp2 does.
      double r = roundFloat(u.type, std::exp2(fv[u.a]));
      F = r < (u.type == UType::F32 ? double(FLT_MIN) : std::ldexp(1.0, -14)) ? 0.0 : r;
      return true;
    }
    case UOpcode::Log2:
      F = roundFloat(u.type, std::log2(fv[u.a]));
      return true;
    case UOpcode::Sin:
      F = roundFloat(u.type, std::sin(fv[u.a]));
      return true;
    case UOpcode::Sqrt:
      F = roundFloat(u.type, std::sqrt(fv[u.a]));
      return true;
    case UOpcode::Mod:
    case UOpcode::Div: {
      int64_t a = iv[u.a], b = iv[u.b];
      if (b == 0)
        return fail(at(pc) + ": " + str(a) + (u.op == UOpcode::Div ? " / 0" : " % 0") +
                    ": integer division by zero");
      bool div = u.op == UOpcode::Div;
      if (u.type == UType::U64) {
        uint64_t x = uint64_t(a), y = uint64_t(b);
        I = int64_t(div ? x / y : x % y);
      } else if (a == INT64_MIN && b == -1) // the one quotient an int64 cannot hold
        I = div ? INT64_MIN : 0;
      else
        I = wrap(u.type, uint64_t(div ? a / b : a % b));
      return true;
    }
    case UOpcode::CmpLt:
      I = isFloatUType(u.srcType)   ? fv[u.a] < fv[u.b]
          : u.srcType == UType::U64 ? uint64_t(iv[u.a]) < uint64_t(iv[u.b])
                                    : iv[u.a] < iv[u.b];
      return true;
    case UOpcode::CmpNe:
      // Unordered: NaN is unequal to everything, itself included.
      I = isFloatUType(u.srcType) ? fv[u.a] != fv[u.b] : iv[u.a] != iv[u.b];
      return true;
    case UOpcode::Where: {
      int32_t from = iv[u.a] != 0 ? u.b : u.c;
      F = fv[from], I = iv[from];
      return true;
    }
    case UOpcode::Cast: {
      bool srcFloat = isFloatUType(u.srcType);
      if (fl)
        F = srcFloat ? roundFloat(u.type, fv[u.a]) : intToFloat(u.type, u.srcType, iv[u.a]);
      else
        I = srcFloat ? truncSat(u.type, fv[u.a]) : wrap(u.type, uint64_t(iv[u.a]));
      return true;
    }
    case UOpcode::Bitcast:
      if (fl) { // i32 -> f32
        uint32_t bits = uint32_t(uint64_t(iv[u.a]));
        float f;
        std::memcpy(&f, &bits, sizeof(f));
        F = double(f);
      } else { // f32 -> i32
        float f = float(fv[u.a]);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof(bits));
        I = int64_t(int32_t(bits));
      }
      return true;
    default:
      return true; // Range, End, If, EndIf and Reduce run in execute()
    }
  }
};

} // namespace

uint64_t UOpWorkerParts::count() const {
  if (slot < 0)
    return 1;
  if (iterations == 0)
    return 0;
  return iterations / each + (iterations % each != 0);
}

void UOpWorkerParts::part(uint64_t k, int64_t &partLo, int64_t &partHi) const {
  // k·each < n_w, so k·each·s_w <= (n_w - 1)·s_w < hi_w - lo_w: no product
  // or sum here wraps (the offsets are added to lo_w modulo 2^64).
  const uint64_t first = k * each;
  partLo = int64_t(uint64_t(lo) + first * uint64_t(step));
  partHi = iterations - first <= each
               ? hi
               : int64_t(uint64_t(lo) + (first + each) * uint64_t(step));
}

UOpWorkerParts uopWorkerParts(const Codelet &c, const std::vector<int64_t> &params,
                              int64_t workers) {
  UOpWorkerParts w;
  const std::vector<int32_t> ranges = uopParallelRanges(c);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const int64_t lo = params[2 * i], hi = params[2 * i + 1], step = c.uop[ranges[i]].step;
    uint64_t n = 0;
    if (hi > lo) {
      const uint64_t span = uint64_t(hi) - uint64_t(lo); // exact, below 2^64
      n = span / uint64_t(step) + (span % uint64_t(step) != 0);
    }
    if (w.slot < 0 || n > w.iterations)
      w.slot = int32_t(i), w.lo = lo, w.hi = hi, w.step = step, w.iterations = n;
  }
  if (w.slot < 0)
    return w;
  const uint64_t parts =
      std::max<uint64_t>(1, std::min<uint64_t>(uint64_t(std::max<int64_t>(1, workers)),
                                               w.iterations));
  w.each = w.iterations / parts + (w.iterations % parts != 0);
  return w;
}

bool runUOp(const Codelet &c, const std::vector<int64_t> &params,
            const std::vector<std::vector<double> *> &fields, int64_t maxSteps, UOpRun &run,
            std::string &error) {
  return Interpreter(c, params, fields, maxSteps, run, error).execute();
}

bool runUOpVertex(const Codelet &c, const std::vector<int64_t> &params,
                  const std::vector<std::vector<double> *> &fields, int64_t workers,
                  int64_t maxSteps, UOpRun &run, std::string &error) {
  const UOpWorkerParts w = uopWorkerParts(c, params, workers);
  const uint64_t parts = w.count();
  std::vector<int64_t> partParams = params;
  for (uint64_t k = 0; k < parts; ++k) {
    if (w.slot >= 0)
      w.part(k, partParams[2 * size_t(w.slot)], partParams[2 * size_t(w.slot) + 1]);
    const int64_t before = run.issued;
    if (!runUOp(c, partParams, fields, maxSteps, run, error))
      return false;
    run.parts.push_back(run.issued - before);
  }
  return true;
}

} // namespace synpl::ipu21::sim
