//===- UOpCheck.cpp - The rules of a generic (UOp) codelet's body ---------===//
//
// checkUOpCodelet walks the body once, keeping the stack of open scopes
// (Range and If bodies). A register is visible from its definition to the
// end of the scope it was defined in; a Range's own register, the loop
// value, only inside its body. Every operand must be a visible register of
// a value-producing UOp with the type the op needs, so that the
// interpreter never reads a register an iteration or a skipped If left
// stale, and never needs a type check of its own.
//
//===----------------------------------------------------------------------===//
#include "UOp.h"

#include "Layout.h"
#include "Names.h"

#include "synpl/Target/IPU21/ProgramFile.h"

#include <algorithm>

namespace synpl::ipu21::sim {

const char *utypeName(UType t) {
  switch (t) {
  case UType::F32:
    return "f32";
  case UType::F16:
    return "f16";
  case UType::I1:
    return "i1";
  case UType::I8:
    return "i8";
  case UType::U8:
    return "ui8";
  case UType::I32:
    return "i32";
  case UType::I64:
    return "i64";
  case UType::Index:
    return "index";
  case UType::U32:
    return "ui32";
  case UType::U64:
    return "ui64";
  }
  return "?";
}

const char *uopName(UOpcode op) {
  // In UOpcode order.
  static const char *const names[] = {
      "const", "range", "end", "if", "endif", "index", "load", "store", "add", "mul",
      "mulacc", "neg", "reciprocal", "max", "mod", "div", "cmplt", "cmpne", "where", "exp2",
      "log2", "sin", "sqrt", "cast", "bitcast", "reduce"};
  size_t i = size_t(op);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "?";
}

namespace {

std::string str(int64_t v) { return std::to_string(v); }

bool validElem(ElemType t) { return uint8_t(t) <= uint8_t(ElemType::U8); }

/// Whether the UOp writes its register (End, If, EndIf and Store do not).
bool producesValue(UOpcode op) {
  return op != UOpcode::End && op != UOpcode::If && op != UOpcode::EndIf &&
         op != UOpcode::Store;
}

} // namespace

void intRange(UType t, int64_t &lo, int64_t &hi) {
  switch (t) {
  case UType::I1:
    lo = 0, hi = 1;
    return;
  case UType::I8:
    lo = INT8_MIN, hi = INT8_MAX;
    return;
  case UType::U8:
    lo = 0, hi = UINT8_MAX;
    return;
  case UType::I32:
    lo = INT32_MIN, hi = INT32_MAX;
    return;
  case UType::U32:
    lo = 0, hi = UINT32_MAX;
    return;
  case UType::U64: // (the values an int64 holds as themselves)
    lo = 0, hi = INT64_MAX;
    return;
  default:
    lo = INT64_MIN, hi = INT64_MAX;
    return;
  }
}

namespace {

class BodyChecker {
public:
  BodyChecker(const Codelet &c, std::string &error) : c(c), body(c.uop), error(error) {}

  bool run() {
    if (!fields())
      return false;
    if (body.size() > size_t(INT32_MAX))
      return fail("more than 2^31 UOps");
    const size_t n = body.size();
    scopeOf.assign(n, -1);
    visible.assign(n, -1);
    closedAt.assign(n, -1);
    open.assign(n, false);
    slotOf.assign(n, -1);
    for (size_t i = 0; i < n; ++i) {
      at = "UOp " + str(int64_t(i)) + " (" + uopName(body[i].op) + ")";
      if (!inst(int32_t(i)))
        return false;
    }
    if (!stack.empty()) {
      int32_t s = stack.back();
      return fail("UOp " + str(s) + " (" + uopName(body[s].op) + ") is never closed by " +
                  (body[s].op == UOpcode::Range ? "an end" : "an endif"));
    }
    for (int32_t k = 0; k < parallel; ++k)
      if (slotOf[k] < 0)
        return fail("parallel slot " + str(k) + " has no range (the parallel ranges take "
                    "slots 0.." + str(parallel - 1) + ", each once)");
    return true;
  }

private:
  const Codelet &c;
  const std::vector<UInst> &body;
  std::string &error;
  std::string at; ///< the UOp being checked, for messages
  /// Per UOp: the innermost scope open at it (-1: the top level; for End
  /// and EndIf the scope around the one they close), the scope its register
  /// is visible in, and for a Range or If the UOp that closed it.
  std::vector<int32_t> scopeOf, visible, closedAt;
  std::vector<bool> open;
  std::vector<int32_t> stack;
  /// The Range of each parallel slot, and how many slots there are.
  std::vector<int32_t> slotOf;
  int32_t parallel = 0;

  bool fail(std::string msg) {
    error = std::move(msg);
    return false;
  }

  bool fields() {
    if (c.uopFields.size() > size_t(INT32_MAX))
      return fail("more than 2^31 fields");
    for (size_t f = 0; f < c.uopFields.size(); ++f) {
      const UOpField &u = c.uopFields[f];
      std::string name = "field " + str(int64_t(f)) + " " + quoteName(u.name);
      if (!validElem(u.type))
        return fail(name + ": element type " + str(int(u.type)) + " is not one of 0..5");
      for (int64_t d : u.shape)
        if (d < 1)
          return fail(name + ": dimension " + str(d) + " is not positive");
      if (shapeElements(u.shape, kMaxCount) < 0)
        return fail(name + ": its shape has more than 2^40 elements");
    }
    return true;
  }

  std::string typeError(int32_t x, const char *role, UType want) {
    return at + ": " + role + " UOp " + str(x) + " is " + utypeName(body[x].type) + ", not " +
           utypeName(want);
  }

  /// Operand `x` of the UOp being checked (at index i): an earlier,
  /// value-producing UOp whose register is visible here.
  bool use(int32_t x, int32_t i, const char *role) {
    if (x < 0 || x >= i)
      return fail(at + ": " + role + " names UOp " + str(x) +
                  ", not an earlier one (registers are SSA: defined before their use)");
    if (!producesValue(body[x].op))
      return fail(at + ": " + role + " names UOp " + str(x) + " (" + uopName(body[x].op) +
                  "), which has no value");
    if (visible[x] >= 0 && !open[visible[x]])
      return fail(at + ": " + role + " names UOp " + str(x) + ", defined in the scope of UOp " +
                  str(visible[x]) + ", which is closed here");
    return true;
  }
  bool useTyped(int32_t x, int32_t i, const char *role, UType want) {
    if (!use(x, i, role))
      return false;
    if (body[x].type != want)
      return fail(typeError(x, role, want));
    return true;
  }
  bool useInt(int32_t x, int32_t i, const char *role) {
    if (!use(x, i, role))
      return false;
    if (isFloatUType(body[x].type))
      return fail(at + ": " + role + " UOp " + str(x) + " is " + utypeName(body[x].type) +
                  ", not an integer");
    return true;
  }
  bool field(const UInst &u) {
    if (u.field < 0 || size_t(u.field) >= c.uopFields.size())
      return fail(at + ": field " + str(u.field) + " does not exist (the codelet has " +
                  str(int64_t(c.uopFields.size())) + ")");
    return true;
  }
  bool floatType(const UInst &u) {
    if (!isFloatUType(u.type))
      return fail(at + ": computes in " + utypeName(u.type) + ", not a float type");
    return true;
  }
  bool intType(const UInst &u) {
    if (isFloatUType(u.type))
      return fail(at + ": computes in " + utypeName(u.type) + ", not an integer type");
    return true;
  }

  void push(int32_t i) {
    stack.push_back(i);
    open[i] = true;
  }
  bool pop(int32_t i, UOpcode opener) {
    const char *what = opener == UOpcode::Range ? "range" : "if";
    if (stack.empty() || body[stack.back()].op != opener)
      return fail(at + ": no open " + what + " to close" +
                  (stack.empty() ? std::string()
                                 : " (the innermost open scope is UOp " + str(stack.back()) +
                                       ", " + uopName(body[stack.back()].op) + ")"));
    if (opener == UOpcode::Range && body[i].a != stack.back())
      return fail(at + ": closes UOp " + str(body[i].a) +
                  ", not the innermost open range (UOp " + str(stack.back()) + ")");
    open[stack.back()] = false;
    closedAt[stack.back()] = i;
    stack.pop_back();
    scopeOf[i] = stack.empty() ? -1 : stack.back();
    return true;
  }

  bool range(const UInst &u, int32_t i) {
    if (!intType(u) || u.type == UType::I1)
      return fail(at + ": its value is " + utypeName(u.type) + ", not an integer wider than i1");
    if (u.step < 1)
      return fail(at + ": step " + str(u.step) + " is not positive");
    int64_t lo, hi;
    intRange(u.type, lo, hi);
    if (u.lo < lo || u.lo > hi || u.hi < lo || u.hi > hi)
      return fail(at + ": [" + str(u.lo) + ", " + str(u.hi) + ") does not fit " +
                  utypeName(u.type));
    if (u.par < -1 || u.par >= int32_t(body.size()))
      return fail(at + ": parallel slot " + str(u.par) +
                  " is neither -1 (a loop) nor a slot of this body");
    if (u.par >= 0) {
      if (slotOf[u.par] >= 0)
        return fail(at + ": parallel slot " + str(u.par) + " is already UOp " +
                    str(slotOf[u.par]) + "'s");
      slotOf[u.par] = i;
      parallel = std::max(parallel, u.par + 1);
    }
    visible[i] = i;
    push(i);
    return true;
  }

  bool reduce(const UInst &u, int32_t i) {
    if (u.iimm < 0 || u.iimm > 2)
      return fail(at + ": op " + str(u.iimm) + " is not 0 (add), 1 (mul) or 2 (max)");
    int32_t b = u.b;
    if (b < 0 || b >= i || body[b].op != UOpcode::Range)
      return fail(at + ": b names UOp " + str(b) + ", not an earlier range");
    if (open[b])
      return fail(at + ": its range (UOp " + str(b) + ") is still open");
    if (scopeOf[b] != scopeOf[i])
      return fail(at + ": its range (UOp " + str(b) +
                  ") is not in the same scope as the reduce");
    // The folded value: defined before the range's End, in the range's body
    // or around it (scopes open here are the ones open around the range).
    int32_t a = u.a;
    if (a < 0 || a >= closedAt[b] || !producesValue(body[a].op) ||
        !(visible[a] == b || visible[a] < 0 || open[visible[a]]))
      return fail(at + ": a names UOp " + str(a) +
                  ", not a value the body of its range (UOp " + str(b) +
                  ") defines in every iteration");
    if (body[a].type != u.type)
      return fail(typeError(a, "a", u.type));
    // The initial value is read when the range starts.
    if (u.c >= b)
      return fail(at + ": c names UOp " + str(u.c) + ", not one defined before its range (UOp " +
                  str(b) + ")");
    return useTyped(u.c, i, "c", u.type);
  }

  bool inst(int32_t i) {
    const UInst &u = body[i];
    if (uint8_t(u.op) > uint8_t(UOpcode::Reduce))
      return fail(at + ": opcode " + str(int(u.op)) + " is not one of 0..25");
    if (uint8_t(u.type) > uint8_t(UType::U64) || uint8_t(u.srcType) > uint8_t(UType::U64))
      return fail(at + ": a type is not one of 0..9");
    scopeOf[i] = stack.empty() ? -1 : stack.back();
    visible[i] = scopeOf[i];
    switch (u.op) {
    case UOpcode::Const:
      return true;
    case UOpcode::Range:
      return range(u, i);
    case UOpcode::End:
      return pop(i, UOpcode::Range);
    case UOpcode::If:
      if (!useInt(u.a, i, "a"))
        return false;
      push(i);
      return true;
    case UOpcode::EndIf:
      return pop(i, UOpcode::If);
    case UOpcode::Index: {
      if (!field(u))
        return false;
      if (isFloatUType(u.type) || u.type == UType::I1)
        return fail(at + ": its offset is " + utypeName(u.type) +
                    ", not an integer wider than i1");
      size_t rank = c.uopFields[u.field].shape.size();
      if (u.indices.size() != rank)
        return fail(at + ": " + str(int64_t(u.indices.size())) + " indices for field " +
                    quoteName(c.uopFields[u.field].name) + " of rank " + str(int64_t(rank)));
      for (int32_t x : u.indices)
        if (!useInt(x, i, "an index"))
          return false;
      return true;
    }
    case UOpcode::Load:
      return field(u) && useInt(u.a, i, "a");
    case UOpcode::Store:
      if (!field(u) || !useInt(u.a, i, "a") || !useTyped(u.b, i, "b", u.type))
        return false;
      if (!c.uopFields[u.field].output)
        return fail(at + ": stores into field " + quoteName(c.uopFields[u.field].name) +
                    ", which is not an output");
      return true;
    case UOpcode::Add:
    case UOpcode::Mul:
    case UOpcode::Max:
      return useTyped(u.a, i, "a", u.type) && useTyped(u.b, i, "b", u.type);
    case UOpcode::MulAcc:
      return useTyped(u.a, i, "a", u.type) && useTyped(u.b, i, "b", u.type) &&
             useTyped(u.c, i, "c", u.type);
    case UOpcode::Neg:
      return useTyped(u.a, i, "a", u.type);
    case UOpcode::Reciprocal:
    case UOpcode::Exp2:
    case UOpcode::Log2:
    case UOpcode::Sin:
    case UOpcode::Sqrt:
      return floatType(u) && useTyped(u.a, i, "a", u.type);
    case UOpcode::Mod:
    case UOpcode::Div:
      return intType(u) && useTyped(u.a, i, "a", u.type) && useTyped(u.b, i, "b", u.type);
    case UOpcode::CmpLt:
    case UOpcode::CmpNe:
      if (u.type != UType::I1)
        return fail(at + ": its result is " + utypeName(u.type) + ", not i1");
      return useTyped(u.a, i, "a", u.srcType) && useTyped(u.b, i, "b", u.srcType);
    case UOpcode::Where:
      return useTyped(u.a, i, "a", UType::I1) && useTyped(u.b, i, "b", u.type) &&
             useTyped(u.c, i, "c", u.type);
    case UOpcode::Cast:
      return useTyped(u.a, i, "a", u.srcType);
    case UOpcode::Bitcast:
      if (!((u.srcType == UType::F32 && u.type == UType::I32) ||
            (u.srcType == UType::I32 && u.type == UType::F32)))
        return fail(at + ": reinterprets " + utypeName(u.srcType) + " as " + utypeName(u.type) +
                    "; only f32 <-> i32 are bitcasts");
      return useTyped(u.a, i, "a", u.srcType);
    case UOpcode::Reduce:
      return reduce(u, i);
    }
    return true;
  }
};

} // namespace

bool checkUOpCodelet(const Codelet &c, std::string &error) {
  if (c.kind != CodeletKind::UOp) {
    if (!c.uopFields.empty() || !c.uop.empty()) {
      error = "only a UOp codelet has UOp fields and a UOp body";
      return false;
    }
    return true;
  }
  return BodyChecker(c, error).run();
}

std::vector<int32_t> uopParallelRanges(const Codelet &c) {
  int32_t slots = 0;
  for (const UInst &u : c.uop)
    if (u.op == UOpcode::Range && u.par >= 0)
      slots = std::max(slots, u.par + 1);
  std::vector<int32_t> out(size_t(slots), -1);
  for (size_t i = 0; i < c.uop.size(); ++i)
    if (c.uop[i].op == UOpcode::Range && c.uop[i].par >= 0)
      out[c.uop[i].par] = int32_t(i);
  return out;
}

} // namespace synpl::ipu21::sim
