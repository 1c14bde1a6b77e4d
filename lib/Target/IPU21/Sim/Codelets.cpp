//===- Codelets.cpp - What each ipu21 codelet computes --------------------===//
//
// AmpMatmul: out (+)= in · weights. With f32 partials (outType f32) each
// output is summed in float, input channel by input channel. With f16
// partials (the hiho AMP) a pass over Facts::ampInChansF16 input channels
// is summed in float and the running sum rounded to half after each pass.
// ReduceAdd: out (+)= the column sums of partials, summed in float for a
// float output and exactly (in double, exact for these integers) for an
// integer output. Copy: dst = src (the store converts). Fill: dst = value.
// UOp: the codelet's own body, interpreted (UOpInterp.cpp), once per
// worker part of the vertex (a MultiVertex: runUOpVertex).
//
//===----------------------------------------------------------------------===//
#include "Codelets.h"

#include "Numbers.h"

#include <algorithm>
#include <cstring>

namespace synpl::ipu21::sim {
namespace {

bool isFloat(ElemType t) { return t != ElemType::I32 && t != ElemType::U8; }

void ampMatmul(const Codelet &c, const std::vector<int64_t> &q,
               std::vector<std::vector<double>> &f, const Facts &facts) {
  const int64_t m = q[0], n = q[1], k = q[2];
  const bool accumulate = q[3] != 0;
  const std::vector<double> &in = f[0], &w = f[1];
  std::vector<double> &out = f[2];
  const bool halfPartials = c.outType == ElemType::F16;
  const int64_t pass = halfPartials && facts.ampInChansF16 > 0 ? facts.ampInChansF16 : k;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = accumulate ? float(out[i * n + j]) : 0.0f;
      for (int64_t k0 = 0; k0 < k; k0 += pass) {
        int64_t k1 = std::min(k, k0 + pass);
        float s = acc;
        for (int64_t kk = k0; kk < k1; ++kk)
          s += float(in[i * k + kk]) * float(w[kk * n + j]);
        acc = halfPartials ? roundToHalf(s) : s;
      }
      if (halfPartials && k == 0)
        acc = roundToHalf(acc);
      out[i * n + j] = acc;
    }
  }
}

void reduceAdd(const Codelet &c, const std::vector<int64_t> &q,
               std::vector<std::vector<double>> &f) {
  const int64_t p = q[0], n = q[1];
  const bool accumulate = q[2] != 0;
  const std::vector<double> &partials = f[0];
  std::vector<double> &out = f[1];
  for (int64_t j = 0; j < n; ++j) {
    if (isFloat(c.outType)) {
      float s = accumulate ? float(out[j]) : 0.0f;
      for (int64_t i = 0; i < p; ++i)
        s += float(partials[i * n + j]);
      out[j] = s;
    } else {
      double s = accumulate ? out[j] : 0.0;
      for (int64_t i = 0; i < p; ++i)
        s += partials[i * n + j];
      out[j] = s;
    }
  }
}

} // namespace

bool runCodelet(const Codelet &c, const std::vector<int64_t> &params,
                std::vector<std::vector<double>> &fields, const Facts &facts, UOpRun &run,
                std::string &error, const std::vector<int32_t> &shared, int64_t maxSteps,
                int64_t workers) {
  switch (c.kind) {
  case CodeletKind::AmpMatmul:
    ampMatmul(c, params, fields, facts);
    return true;
  case CodeletKind::ReduceAdd:
    reduceAdd(c, params, fields);
    return true;
  case CodeletKind::Copy:
    fields[1] = fields[0];
    return true;
  case CodeletKind::Fill: {
    double value;
    static_assert(sizeof(value) == sizeof(params[1]), "the value is the f64 bits of a param");
    std::memcpy(&value, &params[1], sizeof(value));
    fields[0].assign(fields[0].size(), value);
    return true;
  }
  case CodeletKind::UOp: {
    std::vector<std::vector<double> *> views(fields.size());
    for (size_t f = 0; f < fields.size(); ++f)
      views[f] = &fields[f < shared.size() ? size_t(shared[f]) : f];
    return runUOpVertex(c, params, views, workers, maxSteps, run, error);
  }
  }
  return true;
}

} // namespace synpl::ipu21::sim
