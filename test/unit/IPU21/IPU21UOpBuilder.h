//===- IPU21UOpBuilder.h - Building generic (UOp) codelets in tests -*- C++ -*-===//
//
// A UOp body written one instruction at a time, each call returning the
// instruction's register, as the translation from an l0uop kernel would
// emit it.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_TEST_UNIT_IPU21_UOPBUILDER_H
#define SYNPL_TEST_UNIT_IPU21_UOPBUILDER_H

#include "IPU21Builder.h"

namespace ipu21test {

class UOpBody {
public:
  explicit UOpBody(const std::string &name) {
    codelet.name = name;
    codelet.kind = CodeletKind::UOp;
    codelet.codeBytes = 256;
    codelet.address = 0x4C000;
  }

  int32_t field(const std::string &name, ElemType type, std::vector<int64_t> shape,
                bool output = false) {
    codelet.uopFields.push_back({name, type, std::move(shape), output});
    return int32_t(codelet.uopFields.size() - 1);
  }

  int32_t add(UInst u) {
    codelet.uop.push_back(std::move(u));
    return int32_t(codelet.uop.size() - 1);
  }
  int32_t constF(double v, UType t = UType::F32) {
    UInst u = inst(UOpcode::Const, t);
    u.fimm = v;
    return add(u);
  }
  int32_t constI(int64_t v, UType t = UType::Index) {
    UInst u = inst(UOpcode::Const, t);
    u.iimm = v;
    return add(u);
  }
  int32_t range(int64_t lo, int64_t hi, int32_t par = -1, int64_t step = 1) {
    UInst u = inst(UOpcode::Range, UType::Index);
    u.lo = lo, u.hi = hi, u.step = step, u.par = par;
    return add(u);
  }
  void end(int32_t range) { add(op(UOpcode::End, UType::Index, range)); }
  void if_(int32_t cond) { add(op(UOpcode::If, UType::I1, cond)); }
  void endIf() { add(inst(UOpcode::EndIf, UType::I1)); }
  int32_t index(int32_t f, std::vector<int32_t> indices) {
    UInst u = inst(UOpcode::Index, UType::Index);
    u.field = f;
    u.indices = std::move(indices);
    return add(u);
  }
  int32_t load(int32_t f, int32_t offset, UType t = UType::F32) {
    UInst u = op(UOpcode::Load, t, offset);
    u.field = f;
    return add(u);
  }
  void store(int32_t f, int32_t offset, int32_t value, UType t = UType::F32) {
    UInst u = op(UOpcode::Store, t, offset, value);
    u.field = f;
    add(u);
  }
  /// A computing UOp of result type `t`.
  int32_t compute(UOpcode o, UType t, int32_t a, int32_t b = -1, int32_t c = -1) {
    return add(op(o, t, a, b, c));
  }
  /// CmpLt, CmpNe, Cast, Bitcast: operands of type `src`.
  int32_t convert(UOpcode o, UType t, UType src, int32_t a, int32_t b = -1) {
    UInst u = op(o, t, a, b);
    u.srcType = src;
    return add(u);
  }
  /// Reduce: `how` 0 add, 1 mul, 2 max.
  int32_t reduce(int how, UType t, int32_t value, int32_t range, int32_t init) {
    UInst u = op(UOpcode::Reduce, t, value, range, init);
    u.iimm = how;
    return add(u);
  }

  Codelet codelet;

private:
  static UInst inst(UOpcode o, UType t) {
    UInst u;
    u.op = o;
    u.type = t;
    return u;
  }
  static UInst op(UOpcode o, UType t, int32_t a, int32_t b = -1, int32_t c = -1) {
    UInst u = inst(o, t);
    u.a = a, u.b = b, u.c = c;
    return u;
  }
};

/// Adds `body`'s codelet to `p`.
inline int32_t addUOpCodelet(Program &p, const UOpBody &body) {
  p.codelets.push_back(body.codelet);
  return int32_t(p.codelets.size() - 1);
}

/// A one-tile program running `body` once on a target of `workers`
/// workers, its fields bound to tensors of the fields' names and shapes on
/// tile 0; params: the parallel ranges' `ranges`, then each field's whole
/// shape as its window.
inline Program oneTile(const UOpBody &body, std::vector<int64_t> ranges = {},
                       int64_t workers = ipu21Facts().workers) {
  Program p = makeProgram(body.codelet.name);
  p.target.workers = workers;
  int32_t k = addUOpCodelet(p, body);
  std::vector<FieldRef> fields;
  std::vector<int64_t> params = std::move(ranges);
  int64_t address = 0x80000;
  for (const UOpField &f : body.codelet.uopFields) {
    int64_t n = 1;
    for (int64_t d : f.shape) {
      n *= d;
      params.push_back(0);
      params.push_back(d);
    }
    int32_t t = addTensor(p, f.name, f.type, f.shape, 0, n, address);
    address += 0x1000;
    fields.push_back(tensorField(t, 0, n));
  }
  p.main.body = {executeStep(addComputeSet(p, "cs", {vertex(k, tiles(0, 1), fields, params)}))};
  return p;
}

} // namespace ipu21test

#endif // SYNPL_TEST_UNIT_IPU21_UOPBUILDER_H
