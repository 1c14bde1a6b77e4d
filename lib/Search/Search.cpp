//===- Search.cpp - The enumerate/filter/score/select driver --------------===//
#include "synpl/Search/Search.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>

using namespace synpl;
using namespace synpl::search;

double search::totalCost(llvm::ArrayRef<CostTerm> terms) {
  double total = 0;
  for (const CostTerm &term : terms)
    total += term.weighted();
  return total;
}

/// A number as a report shows it: up to 6 significant digits.
static std::string fmt(double value) {
  return llvm::formatv("{0}", llvm::format("%.6g", value)).str();
}

//===----------------------------------------------------------------------===//
// SearchFailure
//===----------------------------------------------------------------------===//

llvm::StringRef search::stringifyFailureKind(SearchFailure::Kind kind) {
  switch (kind) {
  case SearchFailure::Kind::NoCandidates:
    return "NoCandidates";
  case SearchFailure::Kind::TooManyCandidates:
    return "TooManyCandidates";
  case SearchFailure::Kind::Timeout:
    return "Timeout";
  }
  llvm_unreachable("unknown search failure kind");
}

std::string SearchFailure::toString() const {
  switch (kind) {
  case Kind::NoCandidates:
    return "NoCandidates(" + reason + ")";
  case Kind::TooManyCandidates:
    return "TooManyCandidates(" + std::to_string(count) + ")";
  case Kind::Timeout:
    return "Timeout(" + std::to_string(budget.count()) + " ms)";
  }
  llvm_unreachable("unknown search failure kind");
}

std::string SearchFailure::advice() const {
  switch (kind) {
  case Kind::NoCandidates:
    if (bindingCheck.empty())
      return "the source has no form in the target grammar: loosen its "
             "constraints or extend the grammar";
    if (bindingCheck == kNonFiniteCostCheck)
      return "the cost model could not price any valid candidate: give it the "
             "facts it lacks";
    return "loosen the constraint behind '" + bindingCheck + "'";
  case Kind::TooManyCandidates:
    return "the representation is too loose: tighten the constraints or the "
           "enumeration grammar (or raise the cap)";
  case Kind::Timeout:
    return "the problem is genuinely hard: raise the budget, tighten the "
           "constraints so that fewer candidates are enumerated, or redesign "
           "the boundary";
  }
  llvm_unreachable("unknown search failure kind");
}

static llvm::StringRef failureHeadline(SearchFailure::Kind kind) {
  switch (kind) {
  case SearchFailure::Kind::NoCandidates:
    return "no candidates";
  case SearchFailure::Kind::TooManyCandidates:
    return "too many candidates";
  case SearchFailure::Kind::Timeout:
    return "timeout";
  }
  llvm_unreachable("unknown search failure kind");
}

mlir::InFlightDiagnostic
search::emitSearchFailure(mlir::Location loc, const SearchFailure &failure,
                          const SearchReport *report,
                          mlir::DiagnosticSeverity severity) {
  mlir::InFlightDiagnostic diag =
      loc->getContext()->getDiagEngine().emit(loc, severity);
  diag << "search " << failure.boundary << ": "
       << failureHeadline(failure.kind) << ": " << failure.reason << "; "
       << failure.advice();
  if (report) {
    for (const FilterStat &stat : report->filters) {
      if (stat.rejected == 0)
        continue;
      mlir::Diagnostic &note = diag.attachNote();
      note << "check '" << stat.name << "' rejected " << stat.rejected << " of "
           << report->enumerated << " candidates";
      if (!stat.firstReason.empty())
        note << " (first: " << stat.firstRejected << ": " << stat.firstReason
             << ")";
    }
  }
  return diag;
}

mlir::InFlightDiagnostic
search::emitSearchFailure(mlir::Operation *op, const SearchFailure &failure,
                          const SearchReport *report,
                          mlir::DiagnosticSeverity severity) {
  return emitSearchFailure(op->getLoc(), failure, report, severity);
}

//===----------------------------------------------------------------------===//
// SearchState
//===----------------------------------------------------------------------===//

bool detail::ranksBefore(const ScoredSummary &a, const ScoredSummary &b) {
  if (a.cost != b.cost)
    return a.cost < b.cost;
  if (a.tieBreakKey != b.tieBreakKey)
    return a.tieBreakKey < b.tieBreakKey;
  return a.index < b.index;
}

detail::SearchState::SearchState(llvm::StringRef boundary,
                                 const SearchOptions &options,
                                 llvm::ArrayRef<std::string> filterNames)
    : start(std::chrono::steady_clock::now()),
      keepCount(std::max<size_t>(options.reportTop, 2)) {
  report.boundary = boundary.str();
  report.options = options;
  for (const std::string &name : filterNames)
    report.filters.push_back(FilterStat{name, 0, {}, {}});
}

bool detail::SearchState::admitSpaceSize(std::optional<uint64_t> count) {
  report.spaceSize = count;
  if (!count || *count <= report.options.candidateCap)
    return true;
  SearchFailure failure;
  failure.kind = SearchFailure::Kind::TooManyCandidates;
  failure.boundary = report.boundary;
  failure.count = *count;
  failure.cap = report.options.candidateCap;
  // A count that saturated is a lower bound.
  failure.reason = *count == std::numeric_limits<uint64_t>::max()
                       ? llvm::formatv("more than {0} candidates (the count saturated) "
                                       "exceed the cap of {1}",
                                       *count - 1, failure.cap)
                             .str()
                       : llvm::formatv("{0} candidates exceed the cap of {1}", *count,
                                       failure.cap)
                             .str();
  report.failure = std::move(failure);
  return false;
}

bool detail::SearchState::admitCandidate() {
  if (report.enumerated >= report.options.candidateCap) {
    SearchFailure failure;
    failure.kind = SearchFailure::Kind::TooManyCandidates;
    failure.boundary = report.boundary;
    failure.count = report.enumerated + 1;
    failure.cap = report.options.candidateCap;
    failure.reason =
        llvm::formatv("more than {0} candidates (enumeration stopped at the "
                      "cap of {0})",
                      failure.cap)
            .str();
    report.failure = std::move(failure);
    return false;
  }
  if (!checkBudget())
    return false;
  ++report.enumerated;
  return true;
}

bool detail::SearchState::checkBudget() {
  if (failed())
    return false;
  std::chrono::milliseconds budget = report.options.budget;
  if (budget.count() <= 0 || std::chrono::steady_clock::now() - start < budget)
    return true;
  SearchFailure failure;
  failure.kind = SearchFailure::Kind::Timeout;
  failure.boundary = report.boundary;
  failure.count = report.enumerated;
  failure.budget = budget;
  failure.reason = llvm::formatv("the budget of {0} ms ran out after {1} "
                                 "candidates",
                                 budget.count(), report.enumerated)
                       .str();
  report.failure = std::move(failure);
  return false;
}

static void chargeRejection(FilterStat &stat, std::string reason,
                            llvm::function_ref<std::string()> describe) {
  if (stat.rejected++ == 0) {
    stat.firstReason = std::move(reason);
    stat.firstRejected = describe();
  }
}

void detail::SearchState::reject(size_t filterIndex, std::string reason,
                                 llvm::function_ref<std::string()> describe) {
  chargeRejection(report.filters[filterIndex], std::move(reason), describe);
}

void detail::SearchState::rejectNonFiniteCost(
    llvm::function_ref<std::string()> describe) {
  // Appended on first use, so that it is always last.
  if (!nonFiniteCheckAdded) {
    nonFiniteCheckAdded = true;
    report.filters.push_back(FilterStat{kNonFiniteCostCheck.str(), 0, {}, {}});
  }
  chargeRejection(report.filters.back(), "the cost is NaN or infinite",
                  describe);
}

std::optional<size_t> detail::SearchState::offer(ScoredSummary summary) {
  ++report.survivors;
  std::vector<ScoredSummary> &top = report.top;
  auto it = std::upper_bound(top.begin(), top.end(), summary, ranksBefore);
  if (top.size() == keepCount && it == top.end())
    return std::nullopt;
  size_t slot = it - top.begin();
  top.insert(it, std::move(summary));
  if (top.size() > keepCount)
    top.pop_back();
  return slot;
}

/// Term values by name, for comparing two candidates whose cost models
/// produced the same names (a missing term counts as 0).
static llvm::StringMap<double> weightedByName(const ScoredSummary &s) {
  llvm::StringMap<double> map;
  for (const CostTerm &term : s.terms)
    map[term.name] += term.weighted();
  return map;
}

/// Why `winner` beat `runnerUp`: the tie-break, or the cost terms that helped
/// and hurt it most.
static std::string explainWin(const ScoredSummary &winner,
                              const ScoredSummary &runnerUp) {
  std::string out;
  llvm::raw_string_ostream os(out);
  if (winner.cost == runnerUp.cost) {
    os << "tied with the runner-up (" << runnerUp.description << ") at cost "
       << fmt(winner.cost) << "; ";
    if (winner.tieBreakKey != runnerUp.tieBreakKey)
      os << "won the tie-break: key '" << winner.tieBreakKey
         << "' sorts before '" << runnerUp.tieBreakKey << "'";
    else
      os << "same tie-break key '" << winner.tieBreakKey
         << "'; enumerated first";
    return out;
  }
  os << "cost " << fmt(winner.cost) << " vs " << fmt(runnerUp.cost)
     << " for the runner-up (" << runnerUp.description << ")";
  llvm::StringMap<double> mine = weightedByName(winner);
  llvm::StringMap<double> theirs = weightedByName(runnerUp);
  // Term order: the winner's, then any only the runner-up has.
  llvm::SmallVector<std::string> names;
  for (const ScoredSummary *s : {&winner, &runnerUp})
    for (const CostTerm &term : s->terms)
      if (!llvm::is_contained(names, term.name))
        names.push_back(term.name);
  std::string best, worst;
  double bestGain = 0, worstLoss = 0;
  for (const std::string &name : names) {
    double delta = theirs.lookup(name) - mine.lookup(name);
    if (delta > bestGain) {
      bestGain = delta;
      best = name;
    }
    if (delta < worstLoss) {
      worstLoss = delta;
      worst = name;
    }
  }
  if (!best.empty())
    os << "; '" << best << "' decided it (" << fmt(mine.lookup(best)) << " vs "
       << fmt(theirs.lookup(best)) << ")";
  if (!worst.empty())
    os << ", outweighing '" << worst << "' (" << fmt(mine.lookup(worst))
       << " vs " << fmt(theirs.lookup(worst)) << ")";
  return out;
}

void detail::SearchState::finish() {
  report.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::steady_clock::now() - start);
  if (failed())
    return;
  if (report.top.empty()) {
    SearchFailure failure;
    failure.kind = SearchFailure::Kind::NoCandidates;
    failure.boundary = report.boundary;
    failure.count = report.enumerated;
    if (report.enumerated == 0) {
      failure.reason = "the enumerator produced no candidates";
    } else {
      // The binding constraint: the check that rejected the most (the first
      // such in check order).
      const FilterStat *binding = nullptr;
      for (const FilterStat &stat : report.filters)
        if (!binding || stat.rejected > binding->rejected)
          binding = &stat;
      failure.bindingCheck = binding->name;
      failure.reason =
          llvm::formatv("all {0} candidates were rejected; '{1}' rejected {2} "
                        "(first: {3}: {4})",
                        report.enumerated, binding->name, binding->rejected,
                        binding->firstRejected, binding->firstReason)
              .str();
    }
    report.failure = std::move(failure);
    return;
  }
  if (report.top.size() == 1)
    report.why = "the only candidate that passed every check";
  else
    report.why = explainWin(report.top[0], report.top[1]);
  // The runner-up was kept for `why`; the report shows reportTop.
  if (report.top.size() > std::max<size_t>(report.options.reportTop, 1))
    report.top.resize(std::max<size_t>(report.options.reportTop, 1));
}

//===----------------------------------------------------------------------===//
// SearchReport
//===----------------------------------------------------------------------===//

uint64_t SearchReport::rejected() const {
  uint64_t total = 0;
  for (const FilterStat &stat : filters)
    total += stat.rejected;
  return total;
}

static std::string termsString(llvm::ArrayRef<CostTerm> terms) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleave(
      terms, os,
      [&](const CostTerm &term) {
        os << term.name << " " << fmt(term.value);
        if (term.weight != 1)
          os << " x " << fmt(term.weight);
      },
      ", ");
  return out;
}

void SearchReport::print(llvm::raw_ostream &os) const {
  os << "search " << boundary << ": " << enumerated << " enumerated";
  if (spaceSize)
    os << " (space " << (*spaceSize == std::numeric_limits<uint64_t>::max() ? "more than " : "")
       << (*spaceSize == std::numeric_limits<uint64_t>::max() ? *spaceSize - 1 : *spaceSize)
       << ")";
  os << ", " << rejected() << " rejected, " << survivors << " survived";
  if (const ScoredSummary *best = winner())
    os << "; winner: " << best->description;
  else if (failure)
    os << "; failed: " << stringifyFailureKind(failure->kind);
  os << llvm::formatv(" [{0:f2} ms; cap {1}, budget {2} ms]\n",
                      elapsed.count() / 1000.0, options.candidateCap,
                      options.budget.count());

  if (!filters.empty()) {
    size_t width = 5;
    for (const FilterStat &stat : filters)
      width = std::max(width, stat.name.size());
    os << "  " << llvm::left_justify("check", width)
       << "  rejected  first rejection\n";
    for (const FilterStat &stat : filters) {
      os << "  " << llvm::left_justify(stat.name, width) << "  "
         << llvm::right_justify(std::to_string(stat.rejected), 8);
      if (stat.rejected)
        os << "  " << stat.firstRejected << ": " << stat.firstReason;
      os << "\n";
    }
  }

  if (!top.empty()) {
    os << "  top " << top.size() << " of " << survivors << " (best first):\n";
    std::vector<std::string> costs;
    size_t descWidth = 9, costWidth = 4;
    for (const ScoredSummary &s : top) {
      costs.push_back(fmt(s.cost));
      costWidth = std::max(costWidth, costs.back().size());
      descWidth = std::max(descWidth, s.description.size());
    }
    os << "    #  " << llvm::left_justify("cost", costWidth) << "  "
       << llvm::left_justify("candidate", descWidth) << "  terms\n";
    for (auto [i, s] : llvm::enumerate(top))
      os << "    " << (i + 1) << "  " << llvm::left_justify(costs[i], costWidth)
         << "  " << llvm::left_justify(s.description, descWidth) << "  "
         << termsString(s.terms) << "\n";
  }

  if (failure)
    os << "  failure: " << failure->toString() << "; " << failure->advice()
       << "\n";
  else if (!why.empty())
    os << "  why: " << why << "\n";
  if (!notes.empty()) {
    os << "  notes:\n";
    for (const std::string &line : notes)
      os << "    " << line << "\n";
  }
}

std::string SearchReport::str() const {
  std::string out;
  llvm::raw_string_ostream os(out);
  print(os);
  return out;
}

llvm::json::Value SearchReport::toJSON() const {
  llvm::json::Array filterArray;
  for (const FilterStat &stat : filters) {
    llvm::json::Object entry{{"name", stat.name}, {"rejected", stat.rejected}};
    if (stat.rejected) {
      entry["first_rejected"] = stat.firstRejected;
      entry["first_reason"] = stat.firstReason;
    }
    filterArray.push_back(std::move(entry));
  }
  llvm::json::Array topArray;
  for (auto [i, s] : llvm::enumerate(top)) {
    llvm::json::Array terms;
    for (const CostTerm &term : s.terms)
      terms.push_back(llvm::json::Object{{"name", term.name},
                                         {"value", term.value},
                                         {"weight", term.weight},
                                         {"weighted", term.weighted()}});
    topArray.push_back(llvm::json::Object{{"rank", int64_t(i + 1)},
                                          {"candidate", s.description},
                                          {"tie_break_key", s.tieBreakKey},
                                          {"index", s.index},
                                          {"cost", s.cost},
                                          {"terms", std::move(terms)}});
  }
  llvm::json::Object out{
      {"boundary", boundary},
      {"candidate_cap", options.candidateCap},
      {"budget_ms", int64_t(options.budget.count())},
      {"enumerated", enumerated},
      {"filters", std::move(filterArray)},
      {"survivors", survivors},
      {"top", std::move(topArray)},
      {"elapsed_us", int64_t(elapsed.count())},
  };
  if (spaceSize)
    out["space_size"] = *spaceSize;
  if (!notes.empty()) {
    llvm::json::Array noteArray;
    for (const std::string &line : notes)
      noteArray.push_back(line);
    out["notes"] = std::move(noteArray);
  }
  if (const ScoredSummary *best = winner()) {
    out["winner"] = best->description;
    out["why"] = why;
  } else {
    out["winner"] = nullptr;
  }
  if (failure) {
    llvm::json::Object f{{"kind", stringifyFailureKind(failure->kind)},
                         {"reason", failure->reason},
                         {"advice", failure->advice()},
                         {"count", failure->count}};
    if (!failure->bindingCheck.empty())
      f["binding_check"] = failure->bindingCheck;
    if (failure->kind == SearchFailure::Kind::TooManyCandidates)
      f["cap"] = failure->cap;
    if (failure->kind == SearchFailure::Kind::Timeout)
      f["budget_ms"] = int64_t(failure->budget.count());
    out["failure"] = std::move(f);
  } else {
    out["failure"] = nullptr;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// SearchReportSink
//===----------------------------------------------------------------------===//

SearchReportSink &SearchReportSink::global() {
  static SearchReportSink sink;
  return sink;
}

static void printOne(llvm::raw_ostream &os, const SearchReport &report,
                     ReportFormat format) {
  if (format == ReportFormat::JSON)
    os << report.toJSON() << "\n";
  else if (format == ReportFormat::Text)
    report.print(os);
}

void SearchReportSink::record(SearchReport report) {
  std::lock_guard<std::mutex> lock(mutex);
  if (echoFormat != ReportFormat::None) {
    llvm::raw_ostream &os = stream ? *stream : llvm::errs();
    printOne(os, report, echoFormat);
    os.flush();
  }
  collected.push_back(std::move(report));
}

std::vector<SearchReport> SearchReportSink::reports() const {
  std::lock_guard<std::mutex> lock(mutex);
  return collected;
}

void SearchReportSink::clear() {
  std::lock_guard<std::mutex> lock(mutex);
  collected.clear();
}

void SearchReportSink::setFormat(ReportFormat format) {
  std::lock_guard<std::mutex> lock(mutex);
  echoFormat = format;
}

ReportFormat SearchReportSink::format() const {
  std::lock_guard<std::mutex> lock(mutex);
  return echoFormat;
}

void SearchReportSink::setStream(llvm::raw_ostream *os) {
  std::lock_guard<std::mutex> lock(mutex);
  stream = os;
}

void SearchReportSink::printAll(llvm::raw_ostream &os,
                                ReportFormat format) const {
  std::lock_guard<std::mutex> lock(mutex);
  if (format == ReportFormat::JSON) {
    llvm::json::Array all;
    for (const SearchReport &report : collected)
      all.push_back(report.toJSON());
    os << llvm::json::Value(std::move(all)) << "\n";
    return;
  }
  for (const SearchReport &report : collected)
    printOne(os, report, format);
}

void search::recordSearchReport(SearchReport report) {
  SearchReportSink::global().record(std::move(report));
}

void search::registerSearchOptions() {
  static llvm::cl::opt<ReportFormat> reportFormat(
      "synpl-search-report",
      llvm::cl::desc("Print each search boundary's report (candidates "
                     "enumerated, rejected per check, the top few with their "
                     "cost terms, why the winner won) to stderr"),
      llvm::cl::ValueOptional, llvm::cl::init(ReportFormat::None),
      llvm::cl::values(
          clEnumValN(ReportFormat::Text, "text", "a readable table (default)"),
          clEnumValN(ReportFormat::JSON, "json", "one JSON object per line"),
          // The value when the flag is given bare.
          clEnumValN(ReportFormat::Text, "", "")),
      llvm::cl::callback([](const ReportFormat &format) {
        SearchReportSink::global().setFormat(format);
      }));
}
