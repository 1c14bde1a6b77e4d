//===- Search.h - The enumerate/filter/score/select driver -----*- C++ -*-===//
//
// Every lowering boundary of the spec ("Search Architecture") is one search:
//
//   enumerate(source, grammar) -> candidates       (bounded by a cap)
//   filter(candidates, verify_target) -> valid     (named checks)
//   score(valid, cost_model) -> (candidate, cost)  (named, weighted cost terms)
//   select(scored) -> best | SearchFailure         (deterministic tie-break)
//
//   SearchFailure = NoCandidates(reason)            constraints too tight
//                 | TooManyCandidates(count)        representation too loose
//                 | Timeout(budget)                 problem is genuinely hard
//
// `search()` runs one boundary as a stream: each candidate the enumerator
// yields is filtered and scored at once and only the best few are kept, so
// memory stays bounded and enumeration stops as soon as the cap is passed or
// the time budget runs out. It knows no layer: the caller supplies the
// enumerator, the checks and the cost model as callbacks.
//
// Every search produces a SearchReport (counts per check, the top candidates
// with their cost terms, why the winner won). A pass that lowers with it emits
// a failure with `emitSearchFailure` at the source op and hands the report to
// `recordSearchReport`, which `--synpl-search-report` prints.
//
//===----------------------------------------------------------------------===//
#ifndef SYNPL_SEARCH_SEARCH_H
#define SYNPL_SEARCH_SEARCH_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class Operation;
} // namespace mlir

namespace synpl::search {

//===----------------------------------------------------------------------===//
// Cost
//===----------------------------------------------------------------------===//

/// One term of a cost model, e.g. {"params", 1.2e6, 1.0}. A candidate's cost
/// is the sum of value * weight over its terms; the terms are kept so that a
/// report can say which one decided.
struct CostTerm {
  std::string name;
  double value = 0;
  double weight = 1;

  double weighted() const { return value * weight; }
};

/// The weighted sum of `terms`, in order (so that equal terms give bit-equal
/// totals whatever candidate they belong to).
double totalCost(llvm::ArrayRef<CostTerm> terms);

//===----------------------------------------------------------------------===//
// Options, failure, report
//===----------------------------------------------------------------------===//

struct SearchOptions {
  /// More enumerated candidates than this is TooManyCandidates. The spec's
  /// threshold for "representation too loose" is 10K.
  uint64_t candidateCap = 10000;
  /// Wall-clock budget for the whole search; zero or negative means none.
  std::chrono::milliseconds budget{10000};
  /// How many of the best candidates the report keeps (the winner and the
  /// runner-up are always kept, for "why it won").
  unsigned reportTop = 5;
};

struct SearchFailure {
  enum class Kind { NoCandidates, TooManyCandidates, Timeout };

  Kind kind = Kind::NoCandidates;
  /// The boundary, e.g. "L3->L2".
  std::string boundary;
  /// NoCandidates: why (which check rejected how many); others: a sentence.
  std::string reason;
  /// NoCandidates: the check that rejected the most candidates (empty when
  /// the enumerator produced none), i.e. the constraint to loosen.
  std::string bindingCheck;
  /// TooManyCandidates: the candidates counted (the space's size when the
  /// spec can count it, else cap + 1: enumeration stops there). Timeout: the
  /// candidates enumerated before the budget ran out. NoCandidates: the
  /// candidates enumerated.
  uint64_t count = 0;
  /// TooManyCandidates: the cap that was exceeded.
  uint64_t cap = 0;
  /// Timeout: the budget that ran out.
  std::chrono::milliseconds budget{0};

  /// "NoCandidates(<reason>)", "TooManyCandidates(<count>)",
  /// "Timeout(<ms> ms)".
  std::string toString() const;
  /// What the user should change: loosen <check>, tighten the constraints,
  /// or raise the budget / redesign the boundary.
  std::string advice() const;
};

llvm::StringRef stringifyFailureKind(SearchFailure::Kind kind);

/// Per check: how many candidates it rejected (a candidate is charged to the
/// first check that rejects it) and the first rejection's reason.
struct FilterStat {
  std::string name;
  uint64_t rejected = 0;
  std::string firstReason;
  std::string firstRejected; // describe() of the first rejected candidate
};

/// A candidate as the report shows it.
struct ScoredSummary {
  std::string description;
  std::string tieBreakKey;
  uint64_t index = 0; // enumeration order, from 0
  double cost = 0;
  llvm::SmallVector<CostTerm> terms;
};

/// The name under which candidates with a NaN or infinite cost are counted as
/// rejected (after the spec's own checks): a cost model that cannot price a
/// candidate must not let it win.
inline constexpr llvm::StringLiteral kNonFiniteCostCheck = "finite-cost";

struct SearchReport {
  std::string boundary;
  SearchOptions options;
  /// Candidates the enumerator yielded (and the driver accepted).
  uint64_t enumerated = 0;
  /// The spec's count of the space, when it supplies one.
  std::optional<uint64_t> spaceSize;
  /// One entry per check, in check order; a "finite-cost" entry follows when
  /// the cost model priced some candidate at NaN or infinity.
  llvm::SmallVector<FilterStat> filters;
  /// Candidates that passed every check and had a finite cost.
  uint64_t survivors = 0;
  /// The best `options.reportTop` survivors (at least two when there are),
  /// best first; top.front() is the winner when the search succeeded.
  std::vector<ScoredSummary> top;
  /// Why the winner won (empty on failure).
  std::string why;
  /// The boundary's own summary lines (SearchSpec::notes).
  std::vector<std::string> notes;
  std::optional<SearchFailure> failure;
  std::chrono::microseconds elapsed{0};

  bool succeeded() const { return !failure.has_value(); }
  const ScoredSummary *winner() const {
    return succeeded() && !top.empty() ? &top.front() : nullptr;
  }
  /// Total rejected by the checks (finite-cost included).
  uint64_t rejected() const;

  /// Readable table; see docs/search.md for the layout.
  void print(llvm::raw_ostream &os) const;
  std::string str() const;
  llvm::json::Value toJSON() const;
};

/// Emits the failure at `loc` (`search <boundary>: <kind>: <reason>;
/// <advice>`), as an error unless told otherwise (a pass with a fallback may
/// make it a warning). With a report, attaches a note per check that rejected
/// candidates, with its count and first rejection.
mlir::InFlightDiagnostic
emitSearchFailure(mlir::Location loc, const SearchFailure &failure,
                  const SearchReport *report = nullptr,
                  mlir::DiagnosticSeverity severity =
                      mlir::DiagnosticSeverity::Error);
mlir::InFlightDiagnostic
emitSearchFailure(mlir::Operation *op, const SearchFailure &failure,
                  const SearchReport *report = nullptr,
                  mlir::DiagnosticSeverity severity =
                      mlir::DiagnosticSeverity::Error);

//===----------------------------------------------------------------------===//
// The problem
//===----------------------------------------------------------------------===//

/// A named check of the target layer: returns the reason a candidate is
/// invalid, or std::nullopt when it passes.
template <typename Candidate>
struct SearchFilter {
  std::string name;
  std::function<std::optional<std::string>(const Candidate &)> check;
};

/// One search boundary. `Candidate` must be move-constructible and
/// move-assignable; the driver keeps only the few best. `enumerate` and
/// `score` are required; give `describe` too, or reports and the default
/// tie-break cannot tell candidates apart.
template <typename Candidate>
struct SearchSpec {
  /// The boundary, e.g. "L3->L2" or "L2->L1 @train".
  std::string name;
  /// Calls `yield` once per candidate, in any order, and stops as soon as
  /// `yield` returns false (the cap or the budget was reached). It must not
  /// build the whole space first: the cap exists because spaces can be huge.
  std::function<void(llvm::function_ref<bool(Candidate)> yield)> enumerate;
  /// Optional: the size of the space, when it is cheap to count (e.g. the
  /// product of independent axes). A count above the cap fails before
  /// enumerating anything, with the exact count in the failure.
  std::function<std::optional<uint64_t>()> countCandidates;
  /// Checks, in order; a candidate is charged to the first that rejects it.
  llvm::SmallVector<SearchFilter<Candidate>> filters;
  /// The cost model of the target: lower is better.
  std::function<llvm::SmallVector<CostTerm>(const Candidate &)> score;
  /// One line naming the candidate, for reports and diagnostics.
  std::function<std::string(const Candidate &)> describe;
  /// Optional: a stable key that orders candidates of equal cost (smaller
  /// wins). Defaults to describe(). Enumeration order never decides.
  std::function<std::string(const Candidate &)> tieBreakKey;
  /// Optional: sees every survivor with its cost terms (after the checks),
  /// for a boundary that summarizes more than the top few (the placement's
  /// scaling model: the best candidate per replica count).
  std::function<void(const Candidate &, const llvm::SmallVector<CostTerm> &)> observe;
  /// Optional: lines the report prints under `notes:` once the search ends.
  std::function<std::vector<std::string>()> notes;
};

template <typename Candidate>
struct SearchResult {
  /// The best candidate; empty exactly when report.failure is set.
  std::optional<Candidate> winner;
  /// The candidates of report.top, best first (winner is the first).
  std::vector<Candidate> top;
  SearchReport report;

  bool succeeded() const { return winner.has_value(); }
  explicit operator bool() const { return succeeded(); }
  const SearchFailure &failure() const { return *report.failure; }
};

namespace detail {

/// The layer-independent half of a search: counting, the clock, the top-k
/// bookkeeping, and the final select. `search<Candidate>` drives it and keeps
/// the candidates themselves in `slots`, parallel to `report.top`.
class SearchState {
public:
  SearchState(llvm::StringRef boundary, const SearchOptions &options,
              llvm::ArrayRef<std::string> filterNames);

  /// Fails with TooManyCandidates before enumeration when `count` > cap.
  bool admitSpaceSize(std::optional<uint64_t> count);
  /// Called per yielded candidate, before filtering. False: stop (cap
  /// exceeded or budget gone; the failure is recorded).
  bool admitCandidate();
  /// False when the budget is gone (the failure is recorded).
  bool checkBudget();
  void reject(size_t filterIndex, std::string reason,
              llvm::function_ref<std::string()> describe);
  void rejectNonFiniteCost(llvm::function_ref<std::string()> describe);
  /// Counts a survivor that did not make the top.
  void countSurvivor() { ++report.survivors; }
  /// Offers (and counts) a scored survivor. Returns the slot in `report.top`
  /// it took (the caller stores the candidate in the same slot, shifting as
  /// the report shifts), or std::nullopt when it did not make the top.
  std::optional<size_t> offer(ScoredSummary summary);
  /// Select: sets the failure (NoCandidates) or `why`, and the elapsed time.
  void finish();

  bool failed() const { return report.failure.has_value(); }
  bool stopped() const { return failed(); }
  uint64_t index() const { return report.enumerated - 1; }
  size_t keep() const { return keepCount; }

  SearchReport report;

private:
  std::chrono::steady_clock::time_point start;
  size_t keepCount;
  bool nonFiniteCheckAdded = false;
};

/// Whether `a` ranks before `b`: lower cost, then smaller tie-break key, then
/// earlier enumeration (only reached when keys are not unique).
bool ranksBefore(const ScoredSummary &a, const ScoredSummary &b);

} // namespace detail

/// Runs one search boundary. Never fails silently: a failed search has
/// report.failure set, and the report holds what was seen up to the failure.
template <typename Candidate>
SearchResult<Candidate> search(const SearchSpec<Candidate> &spec,
                               const SearchOptions &options = {}) {
  assert(spec.enumerate && spec.score && "a search needs an enumerator and "
                                          "a cost model");
  llvm::SmallVector<std::string> filterNames;
  for (const SearchFilter<Candidate> &filter : spec.filters)
    filterNames.push_back(filter.name);
  detail::SearchState state(spec.name, options, filterNames);

  // Parallel to state.report.top.
  std::vector<Candidate> slots;
  auto describe = [&](const Candidate &candidate) {
    return spec.describe ? spec.describe(candidate)
                         : std::string("<candidate>");
  };

  if (state.admitSpaceSize(spec.countCandidates ? spec.countCandidates()
                                                : std::nullopt)) {
    spec.enumerate([&](Candidate candidate) -> bool {
      // An enumerator that ignores `false` gets no further candidates in.
      if (state.stopped() || !state.admitCandidate())
        return false;
      for (auto [i, filter] : llvm::enumerate(spec.filters)) {
        if (std::optional<std::string> reason = filter.check(candidate)) {
          state.reject(i, std::move(*reason),
                       [&] { return describe(candidate); });
          return state.checkBudget();
        }
      }
      ScoredSummary summary;
      summary.terms = spec.score(candidate);
      summary.cost = totalCost(summary.terms);
      if (!std::isfinite(summary.cost)) {
        state.rejectNonFiniteCost([&] { return describe(candidate); });
        return state.checkBudget();
      }
      if (spec.observe)
        spec.observe(candidate, summary.terms);
      summary.index = state.index();
      summary.tieBreakKey = spec.tieBreakKey ? spec.tieBreakKey(candidate)
                                             : describe(candidate);
      // Describe only what makes the top: describing can be costly.
      bool mayEnter =
          state.report.top.size() < state.keep() ||
          detail::ranksBefore(summary, state.report.top.back());
      if (mayEnter) {
        summary.description = describe(candidate);
        if (std::optional<size_t> slot = state.offer(std::move(summary))) {
          if (slots.size() == state.keep())
            slots.pop_back();
          slots.insert(slots.begin() + *slot, std::move(candidate));
        }
      } else {
        state.countSurvivor();
      }
      return state.checkBudget();
    });
  }
  state.finish();
  if (spec.notes)
    state.report.notes = spec.notes();

  SearchResult<Candidate> result;
  if (!state.failed()) {
    result.winner = slots.front();
    result.top = std::move(slots);
  }
  result.report = std::move(state.report);
  return result;
}

/// What a lowering pass calls: runs the search, records its report (for
/// --synpl-search-report), and on failure emits the SearchFailure at `loc`
/// (the source op's location) with the report's notes.
///
///   FailureOr<Method> best = search::searchAndReport(op->getLoc(), spec);
///   if (failed(best))
///     return signalPassFailure();
template <typename Candidate>
mlir::FailureOr<Candidate> searchAndReport(mlir::Location loc,
                                           const SearchSpec<Candidate> &spec,
                                           const SearchOptions &options = {});

//===----------------------------------------------------------------------===//
// Collecting reports (--synpl-search-report)
//===----------------------------------------------------------------------===//

enum class ReportFormat { None, Text, JSON };

/// Where passes leave their reports. Thread-safe (passes run in parallel).
/// When a format is set (by --synpl-search-report or by a C++ caller), each
/// recorded report is also printed to stderr as it arrives, so the reports
/// of one compilation appear in pipeline order.
class SearchReportSink {
public:
  SearchReportSink() = default;
  /// The sink --synpl-search-report prints from.
  static SearchReportSink &global();

  void record(SearchReport report);
  std::vector<SearchReport> reports() const;
  void clear();

  void setFormat(ReportFormat format);
  ReportFormat format() const;
  /// Prints to `os` in `format` (all reports; JSON: one array).
  void printAll(llvm::raw_ostream &os, ReportFormat format) const;

  /// Where reports are echoed when a format is set; stderr by default.
  void setStream(llvm::raw_ostream *os);

private:
  mutable std::mutex mutex;
  std::vector<SearchReport> collected;
  ReportFormat echoFormat = ReportFormat::None;
  llvm::raw_ostream *stream = nullptr;
};

/// Hands `report` to the global sink.
void recordSearchReport(SearchReport report);

/// Registers --synpl-search-report[=json] (text by default). Call before
/// parsing the command line; registerAllPasses() does.
void registerSearchOptions();

template <typename Candidate>
mlir::FailureOr<Candidate> searchAndReport(mlir::Location loc,
                                           const SearchSpec<Candidate> &spec,
                                           const SearchOptions &options) {
  SearchResult<Candidate> result = search(spec, options);
  if (!result.succeeded())
    (void)emitSearchFailure(loc, result.failure(), &result.report);
  recordSearchReport(std::move(result.report));
  if (!result.winner)
    return mlir::failure();
  return std::move(*result.winner);
}

} // namespace synpl::search

#endif // SYNPL_SEARCH_SEARCH_H
