//===- SearchTest.cpp - The enumerate/filter/score/select driver ----------===//
//
// A toy boundary: choose (depth, width) for an MLP on 784 inputs and 10
// classes, under a parameter budget, scored by parameters and FLOPs. Each
// property of the driver is checked against a brute-force recomputation.
//
//===----------------------------------------------------------------------===//
#include "synpl/Search/Search.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <thread>

using namespace synpl::search;

namespace {

struct Mlp {
  int depth;
  int width;
};

constexpr int kInputs = 784, kClasses = 10;

double params(const Mlp &m) {
  double p = double(kInputs) * m.width + m.width;
  p += double(m.depth - 1) * (double(m.width) * m.width + m.width);
  return p + double(m.width) * kClasses + kClasses;
}
double flops(const Mlp &m) { return 2 * params(m); }

std::string describeMlp(const Mlp &m) {
  return "depth=" + std::to_string(m.depth) +
         " width=" + std::to_string(m.width);
}

const std::vector<int> kDepths = {1, 2, 3, 4, 5, 6};
const std::vector<int> kWidths = {16, 32, 64, 128, 256, 512};

/// The toy boundary. `budget`: the parameter budget; `minCapacity`: a lower
/// bound on depth * width (a stand-in for "expressive enough").
SearchSpec<Mlp> mlpSpec(double budget, int minCapacity, int *calls = nullptr) {
  SearchSpec<Mlp> spec;
  spec.name = "L3->L2";
  spec.enumerate = [calls](llvm::function_ref<bool(Mlp)> yield) {
    for (int d : kDepths)
      for (int w : kWidths) {
        if (calls)
          ++*calls;
        if (!yield({d, w}))
          return;
      }
  };
  spec.filters.push_back(
      {"min-capacity", [minCapacity](const Mlp &m) -> std::optional<std::string> {
         if (m.depth * m.width >= minCapacity)
           return std::nullopt;
         return "capacity " + std::to_string(m.depth * m.width) + " < " +
                std::to_string(minCapacity);
       }});
  spec.filters.push_back(
      {"param-budget", [budget](const Mlp &m) -> std::optional<std::string> {
         if (params(m) <= budget)
           return std::nullopt;
         return std::to_string(int64_t(params(m))) + " params > " +
                std::to_string(int64_t(budget));
       }});
  spec.score = [](const Mlp &m) {
    // A convergence prior: deeper than 4 trains worse on this toy.
    double prior = m.depth > 4 ? 1e5 : 0.0;
    return llvm::SmallVector<CostTerm>{{"params", params(m), 1.0},
                                       {"flops", flops(m), 0.25},
                                       {"depth-prior", prior, 1.0}};
  };
  spec.describe = describeMlp;
  return spec;
}

double costOf(const Mlp &m) {
  return params(m) * 1.0 + flops(m) * 0.25 + (m.depth > 4 ? 1e5 : 0.0);
}

} // namespace

TEST_CASE("the winner is the brute-force minimum and the counts are exact",
          "[search]") {
  const double budget = 300'000;
  const int minCapacity = 256;
  SearchResult<Mlp> result = search(mlpSpec(budget, minCapacity));
  REQUIRE(result.succeeded());

  // Brute force: every candidate, charged to the first check that rejects it.
  uint64_t byCapacity = 0, byBudget = 0, survivors = 0;
  std::optional<Mlp> best;
  for (int d : kDepths)
    for (int w : kWidths) {
      Mlp m{d, w};
      if (d * w < minCapacity) {
        ++byCapacity;
        continue;
      }
      if (params(m) > budget) {
        ++byBudget;
        continue;
      }
      ++survivors;
      if (!best || costOf(m) < costOf(*best) ||
          (costOf(m) == costOf(*best) && describeMlp(m) < describeMlp(*best)))
        best = m;
    }
  REQUIRE(best);
  CHECK(result.winner->depth == best->depth);
  CHECK(result.winner->width == best->width);

  const SearchReport &report = result.report;
  CHECK(report.boundary == "L3->L2");
  CHECK(report.enumerated == kDepths.size() * kWidths.size());
  REQUIRE(report.filters.size() == 2);
  CHECK(report.filters[0].name == "min-capacity");
  CHECK(report.filters[0].rejected == byCapacity);
  CHECK(report.filters[1].name == "param-budget");
  CHECK(report.filters[1].rejected == byBudget);
  CHECK(report.survivors == survivors);
  CHECK(report.rejected() + report.survivors == report.enumerated);
  // The first rejection in enumeration order is (1, 16).
  CHECK(report.filters[0].firstRejected == "depth=1 width=16");
  CHECK(report.filters[0].firstReason == "capacity 16 < 256");

  // The top is sorted, starts at the winner, and carries the cost terms.
  REQUIRE(report.winner());
  CHECK(report.winner()->description == describeMlp(*best));
  CHECK(report.winner()->cost == costOf(*best));
  CHECK(report.top.size() == std::min<uint64_t>(5, survivors));
  for (size_t i = 1; i < report.top.size(); ++i)
    CHECK(report.top[i - 1].cost <= report.top[i].cost);
  REQUIRE(report.winner()->terms.size() == 3);
  CHECK(report.winner()->terms[1].name == "flops");
  CHECK(report.winner()->terms[1].weight == 0.25);
  CHECK_FALSE(report.why.empty());
  CHECK(report.why.find("runner-up") != std::string::npos);
}

TEST_CASE("equal costs are broken by the tie-break key, not by enumeration "
          "order",
          "[search]") {
  auto makeSpec = [](std::vector<std::string> order) {
    SearchSpec<std::string> spec;
    spec.name = "L2->L1";
    spec.enumerate = [order](llvm::function_ref<bool(std::string)> yield) {
      for (const std::string &s : order)
        if (!yield(s))
          return;
    };
    spec.score = [](const std::string &s) {
      // "b" and "a" cost the same; "c" costs more.
      return llvm::SmallVector<CostTerm>{{"time", s == "c" ? 2.0 : 1.0, 1.0}};
    };
    spec.describe = [](const std::string &s) { return "placement " + s; };
    spec.tieBreakKey = [](const std::string &s) { return s; };
    return spec;
  };
  SearchResult<std::string> forward = search(makeSpec({"a", "b", "c"}));
  SearchResult<std::string> backward = search(makeSpec({"c", "b", "a"}));
  REQUIRE(forward.succeeded());
  REQUIRE(backward.succeeded());
  CHECK(*forward.winner == "a");
  CHECK(*backward.winner == "a");
  CHECK(backward.report.why ==
        "tied with the runner-up (placement b) at cost 1; won the tie-break: "
        "key 'a' sorts before 'b'");

  // Without a key, describe() is the key.
  SearchSpec<std::string> noKey = makeSpec({"b", "a"});
  noKey.tieBreakKey = nullptr;
  CHECK(*search(noKey).winner == "a");
}

TEST_CASE("why names the cost term that separated the winner from the "
          "runner-up",
          "[search]") {
  SearchSpec<int> spec;
  spec.name = "kernel";
  spec.enumerate = [](llvm::function_ref<bool(int)> yield) {
    yield(0) && yield(1);
  };
  spec.score = [](int i) {
    // 0: compute 10, memory 5 (15); 1: compute 4, memory 20 (24).
    return llvm::SmallVector<CostTerm>{{"compute", i ? 4.0 : 10.0, 1.0},
                                       {"memory", i ? 20.0 : 5.0, 1.0}};
  };
  spec.describe = [](int i) { return "config " + std::to_string(i); };
  SearchResult<int> result = search(spec);
  REQUIRE(result.succeeded());
  CHECK(*result.winner == 0);
  CHECK(result.report.why ==
        "cost 15 vs 24 for the runner-up (config 1); 'memory' decided it "
        "(5 vs 20), outweighing 'compute' (10 vs 4)");

  // A single survivor wins by default, and reportTop = 1 keeps only it.
  SearchOptions options;
  options.reportTop = 1;
  SearchResult<int> top1 = search(spec, options);
  CHECK(top1.report.top.size() == 1);
  CHECK(top1.report.why.find("'memory' decided it") != std::string::npos);
  spec.enumerate = [](llvm::function_ref<bool(int)> yield) { yield(1); };
  CHECK(search(spec).report.why ==
        "the only candidate that passed every check");
}

TEST_CASE("NoCandidates names the check that rejected the most", "[search]") {
  // A budget of 1000 parameters admits nothing; min-capacity 64 rejects the
  // few small ones first, the budget rejects the rest.
  SearchResult<Mlp> result = search(mlpSpec(1000, 64));
  REQUIRE_FALSE(result.succeeded());
  const SearchFailure &failure = result.failure();
  CHECK(failure.kind == SearchFailure::Kind::NoCandidates);
  CHECK(failure.bindingCheck == "param-budget");
  CHECK(failure.count == 36);
  // (1,16), (1,32), (2,16), (3,16) are below capacity 64.
  CHECK(result.report.filters[0].rejected == 4);
  CHECK(result.report.filters[0].rejected + result.report.filters[1].rejected ==
        36);
  CHECK(failure.reason.find("all 36 candidates were rejected; 'param-budget' "
                            "rejected 32") == 0);
  CHECK(failure.advice() == "loosen the constraint behind 'param-budget'");
  CHECK(failure.toString().find("NoCandidates(all 36") == 0);
  CHECK(result.report.top.empty());
  CHECK(result.report.winner() == nullptr);

  // An enumerator that yields nothing: nothing to loosen but the grammar.
  SearchSpec<Mlp> empty = mlpSpec(1e9, 0);
  empty.enumerate = [](llvm::function_ref<bool(Mlp)>) {};
  SearchResult<Mlp> none = search(empty);
  REQUIRE_FALSE(none.succeeded());
  CHECK(none.failure().kind == SearchFailure::Kind::NoCandidates);
  CHECK(none.failure().bindingCheck.empty());
  CHECK(none.failure().reason == "the enumerator produced no candidates");
}

TEST_CASE("a cost the model cannot price never wins", "[search]") {
  SearchSpec<int> spec;
  spec.name = "L2->L1";
  spec.enumerate = [](llvm::function_ref<bool(int)> yield) {
    for (int i = 0; i < 4; ++i)
      if (!yield(i))
        return;
  };
  spec.score = [](int i) {
    return llvm::SmallVector<CostTerm>{
        {"time", i < 2 ? std::nan("") : double(10 - i), 1.0}};
  };
  spec.describe = [](int i) { return std::to_string(i); };
  SearchResult<int> result = search(spec);
  REQUIRE(result.succeeded());
  CHECK(*result.winner == 3);
  REQUIRE(result.report.filters.size() == 1);
  CHECK(result.report.filters[0].name == kNonFiniteCostCheck);
  CHECK(result.report.filters[0].rejected == 2);
  CHECK(result.report.survivors == 2);
}

TEST_CASE("TooManyCandidates stops enumerating at the cap", "[search]") {
  int calls = 0;
  SearchSpec<int> spec;
  spec.name = "L3->L2";
  spec.enumerate = [&calls](llvm::function_ref<bool(int)> yield) {
    for (int i = 0; i < 1'000'000; ++i) {
      ++calls;
      if (!yield(i))
        return;
    }
  };
  spec.score = [](int i) {
    return llvm::SmallVector<CostTerm>{{"c", double(i), 1}};
  };
  spec.describe = [](int i) { return std::to_string(i); };

  SearchOptions options;
  options.candidateCap = 100;
  SearchResult<int> result = search(spec, options);
  REQUIRE_FALSE(result.succeeded());
  CHECK(result.failure().kind == SearchFailure::Kind::TooManyCandidates);
  CHECK(calls == 101); // the 101st was refused, and the enumerator stopped
  CHECK(result.report.enumerated == 100);
  CHECK(result.failure().count == 101);
  CHECK(result.failure().cap == 100);
  CHECK(result.failure().toString() == "TooManyCandidates(101)");
  CHECK(result.failure().advice().find("tighten the constraints") !=
        std::string::npos);

  // The default cap is the spec's 10K.
  calls = 0;
  CHECK(SearchOptions().candidateCap == 10000);
  CHECK(search(spec).failure().kind == SearchFailure::Kind::TooManyCandidates);
  CHECK(calls == 10001);

  // A spec that can count its space fails before enumerating, with the
  // exact count.
  calls = 0;
  spec.countCandidates = []() -> std::optional<uint64_t> { return 1'000'000; };
  SearchResult<int> counted = search(spec);
  REQUIRE_FALSE(counted.succeeded());
  CHECK(calls == 0);
  CHECK(counted.failure().count == 1'000'000);
  CHECK(counted.failure().reason ==
        "1000000 candidates exceed the cap of 10000");
  CHECK(counted.report.spaceSize == 1'000'000u);

  // An enumerator that ignores `false` gets nothing more counted.
  SearchSpec<int> stubborn = spec;
  stubborn.countCandidates = nullptr;
  stubborn.enumerate = [](llvm::function_ref<bool(int)> yield) {
    for (int i = 0; i < 50; ++i)
      (void)yield(i);
  };
  options.candidateCap = 10;
  SearchResult<int> ignored = search(stubborn, options);
  CHECK(ignored.failure().kind == SearchFailure::Kind::TooManyCandidates);
  CHECK(ignored.report.enumerated == 10);
  CHECK(ignored.report.survivors == 10);
}

TEST_CASE("Timeout when the budget runs out", "[search]") {
  int scored = 0;
  SearchSpec<int> spec;
  spec.name = "L2->L1";
  spec.enumerate = [](llvm::function_ref<bool(int)> yield) {
    for (int i = 0; i < 1000; ++i)
      if (!yield(i))
        return;
  };
  spec.score = [&scored](int i) {
    ++scored;
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    return llvm::SmallVector<CostTerm>{{"time", double(i), 1}};
  };
  spec.describe = [](int i) { return std::to_string(i); };
  SearchOptions options;
  // Generous against a loaded machine: only the sleep may outlast it.
  options.budget = std::chrono::milliseconds(20);
  SearchResult<int> result = search(spec, options);
  REQUIRE_FALSE(result.succeeded());
  const SearchFailure &failure = result.failure();
  CHECK(failure.kind == SearchFailure::Kind::Timeout);
  CHECK(failure.budget == std::chrono::milliseconds(20));
  // The first score alone outlasts the budget.
  CHECK(scored == 1);
  CHECK(failure.count == 1);
  CHECK(failure.toString() == "Timeout(20 ms)");
  CHECK(failure.reason == "the budget of 20 ms ran out after 1 candidates");
  // What was seen is still reported.
  CHECK(result.report.top.size() == 1);

  // A budget of zero is no budget.
  options.budget = std::chrono::milliseconds(0);
  spec.score = [](int i) {
    return llvm::SmallVector<CostTerm>{{"t", double(i), 1}};
  };
  CHECK(search(spec, options).succeeded());
}

TEST_CASE("the report prints a table and round-trips through JSON",
          "[search]") {
  SearchResult<Mlp> result = search(mlpSpec(300'000, 256));
  REQUIRE(result.succeeded());
  std::string text = result.report.str();
  INFO(text);
  CHECK(text.find("search L3->L2: 36 enumerated, ") == 0);
  CHECK(text.find("winner: " + describeMlp(*result.winner)) !=
        std::string::npos);
  CHECK(text.find("  check         rejected  first rejection\n") !=
        std::string::npos);
  CHECK(text.find("  min-capacity        ") != std::string::npos);
  CHECK(text.find("depth=1 width=16: capacity 16 < 256") != std::string::npos);
  CHECK(text.find("  top 5 of ") != std::string::npos);
  CHECK(text.find("params ") != std::string::npos);
  CHECK(text.find("flops ") != std::string::npos);
  CHECK(text.find(" x 0.25") != std::string::npos);
  CHECK(text.find("  why: cost ") != std::string::npos);

  std::string json;
  llvm::raw_string_ostream os(json);
  os << result.report.toJSON();
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(json);
  REQUIRE(static_cast<bool>(parsed));
  const llvm::json::Object *obj = parsed->getAsObject();
  REQUIRE(obj);
  CHECK(obj->getString("boundary") == "L3->L2");
  CHECK(obj->getInteger("enumerated") == 36);
  CHECK(obj->getInteger("candidate_cap") == 10000);
  CHECK(obj->getString("winner") == describeMlp(*result.winner));
  CHECK(obj->getString("why") == result.report.why);
  CHECK(obj->get("failure")->getAsNull());
  const llvm::json::Array *filters = obj->getArray("filters");
  REQUIRE(filters);
  REQUIRE(filters->size() == 2);
  CHECK((*filters)[1].getAsObject()->getString("name") == "param-budget");
  CHECK((*filters)[1].getAsObject()->getInteger("rejected") ==
        int64_t(result.report.filters[1].rejected));
  const llvm::json::Array *top = obj->getArray("top");
  REQUIRE(top);
  REQUIRE(top->size() == result.report.top.size());
  const llvm::json::Object *first = (*top)[0].getAsObject();
  CHECK(first->getNumber("cost") == result.report.top[0].cost);
  CHECK(first->getArray("terms")->size() == 3);
  CHECK((*first->getArray("terms"))[1].getAsObject()->getNumber("weighted") ==
        flops(*result.winner) * 0.25);

  // A failed search reports its failure in both forms.
  SearchResult<Mlp> failed = search(mlpSpec(1000, 64));
  CHECK(failed.report.str().find("  failure: NoCandidates(all 36") !=
        std::string::npos);
  std::string failedJson;
  llvm::raw_string_ostream fos(failedJson);
  fos << failed.report.toJSON();
  llvm::Expected<llvm::json::Value> failedParsed =
      llvm::json::parse(failedJson);
  REQUIRE(static_cast<bool>(failedParsed));
  const llvm::json::Object *f =
      failedParsed->getAsObject()->getObject("failure");
  REQUIRE(f);
  CHECK(f->getString("kind") == "NoCandidates");
  CHECK(f->getString("binding_check") == "param-budget");
  CHECK(failedParsed->getAsObject()->get("winner")->getAsNull());
}

TEST_CASE("a SearchFailure is a diagnostic at the source op", "[search]") {
  mlir::MLIRContext context;
  std::vector<std::string> messages;
  std::vector<mlir::Location> locations;
  std::vector<std::string> notes;
  std::vector<mlir::DiagnosticSeverity> severities;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    messages.push_back(diag.str());
    locations.push_back(diag.getLocation());
    severities.push_back(diag.getSeverity());
    for (mlir::Diagnostic &note : diag.getNotes())
      notes.push_back(note.str());
    return mlir::success();
  });
  mlir::Location loc = mlir::FileLineColLoc::get(&context, "model.syn", 3, 5);
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);

  SearchResult<Mlp> failed = search(mlpSpec(1000, 64));
  REQUIRE_FALSE(failed.succeeded());
  (void)emitSearchFailure(module->getOperation(), failed.failure(),
                          &failed.report);
  REQUIRE(messages.size() == 1);
  CHECK(locations[0] == loc);
  CHECK(severities[0] == mlir::DiagnosticSeverity::Error);
  CHECK(messages[0].find("search L3->L2: no candidates: all 36 candidates were "
                         "rejected; 'param-budget' rejected 32") == 0);
  CHECK(messages[0].find("; loosen the constraint behind 'param-budget'") !=
        std::string::npos);
  REQUIRE(notes.size() == 2);
  CHECK(notes[0] == "check 'min-capacity' rejected 4 of 36 candidates (first: "
                    "depth=1 width=16: capacity 16 < 64)");
  CHECK(notes[1].find("check 'param-budget' rejected 32 of 36") == 0);

  SearchFailure tooMany;
  tooMany.kind = SearchFailure::Kind::TooManyCandidates;
  tooMany.boundary = "L3->L2";
  tooMany.count = 20000;
  tooMany.cap = 10000;
  tooMany.reason = "20000 candidates exceed the cap of 10000";
  (void)emitSearchFailure(loc, tooMany);
  REQUIRE(messages.size() == 2);
  CHECK(messages[1] ==
        "search L3->L2: too many candidates: 20000 candidates exceed the cap "
        "of 10000; the representation is too loose: tighten the constraints or "
        "the enumeration grammar (or raise the cap)");

  SearchFailure timeout;
  timeout.kind = SearchFailure::Kind::Timeout;
  timeout.boundary = "L2->L1";
  timeout.budget = std::chrono::milliseconds(50);
  timeout.count = 7;
  timeout.reason = "the budget of 50 ms ran out after 7 candidates";
  // A pass with a fallback can make it a warning.
  (void)emitSearchFailure(loc, timeout, nullptr,
                          mlir::DiagnosticSeverity::Warning);
  REQUIRE(messages.size() == 3);
  CHECK(severities[2] == mlir::DiagnosticSeverity::Warning);
  CHECK(messages[2].find("search L2->L1: timeout: the budget of 50 ms ran out "
                         "after 7 candidates; the problem is genuinely hard") ==
        0);
}

TEST_CASE("the report sink collects reports and echoes them when asked",
          "[search]") {
  SearchReportSink sink;
  std::string echoed;
  llvm::raw_string_ostream os(echoed);
  sink.setStream(&os);

  SearchResult<Mlp> a = search(mlpSpec(300'000, 256));
  sink.record(a.report); // no format: collected, not printed
  CHECK(echoed.empty());
  sink.setFormat(ReportFormat::JSON);
  SearchResult<Mlp> b = search(mlpSpec(1000, 64));
  sink.record(b.report);
  CHECK(sink.reports().size() == 2);
  // JSON echo: one object per line.
  REQUIRE(!echoed.empty());
  CHECK(echoed.back() == '\n');
  llvm::Expected<llvm::json::Value> line =
      llvm::json::parse(llvm::StringRef(echoed).drop_back());
  REQUIRE(static_cast<bool>(line));
  CHECK(line->getAsObject()->getObject("failure")->getString("kind") ==
        "NoCandidates");

  std::string all;
  llvm::raw_string_ostream allOs(all);
  sink.printAll(allOs, ReportFormat::JSON);
  llvm::Expected<llvm::json::Value> array = llvm::json::parse(all);
  REQUIRE(static_cast<bool>(array));
  REQUIRE(array->getAsArray());
  CHECK(array->getAsArray()->size() == 2);

  std::string text;
  llvm::raw_string_ostream textOs(text);
  sink.printAll(textOs, ReportFormat::Text);
  CHECK(text == a.report.str() + b.report.str());

  sink.clear();
  CHECK(sink.reports().empty());
}

TEST_CASE("searchAndReport records the report and emits a failure at the "
          "source",
          "[search]") {
  mlir::MLIRContext context;
  std::vector<std::string> messages;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    messages.push_back(diag.str());
    return mlir::success();
  });
  mlir::Location loc = mlir::FileLineColLoc::get(&context, "model.syn", 1, 1);
  SearchReportSink &sink = SearchReportSink::global();
  sink.clear();

  mlir::FailureOr<Mlp> best = searchAndReport(loc, mlpSpec(300'000, 256));
  REQUIRE(mlir::succeeded(best));
  CHECK(messages.empty());
  mlir::FailureOr<Mlp> none = searchAndReport(loc, mlpSpec(1000, 64));
  CHECK(mlir::failed(none));
  REQUIRE(messages.size() == 1);
  CHECK(messages[0].find("search L3->L2: no candidates: ") == 0);

  std::vector<SearchReport> reports = sink.reports();
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].winner()->description == describeMlp(*best));
  CHECK(reports[1].failure->kind == SearchFailure::Kind::NoCandidates);
  sink.clear();
}

TEST_CASE("the synpl-search-report flag sets the global sink's format",
          "[search]") {
  registerSearchOptions();
  SearchReportSink &sink = SearchReportSink::global();
  CHECK(sink.format() == ReportFormat::None);

  const char *bare[] = {"synpl-unit-tests", "--synpl-search-report"};
  REQUIRE(llvm::cl::ParseCommandLineOptions(2, bare, "", &llvm::nulls()));
  CHECK(sink.format() == ReportFormat::Text);
  llvm::cl::ResetAllOptionOccurrences();

  const char *json[] = {"synpl-unit-tests", "--synpl-search-report=json"};
  REQUIRE(llvm::cl::ParseCommandLineOptions(2, json, "", &llvm::nulls()));
  CHECK(sink.format() == ReportFormat::JSON);
  llvm::cl::ResetAllOptionOccurrences();
  sink.setFormat(ReportFormat::None);
}

TEST_CASE("the kept top is the sorted prefix of all survivors, whatever the "
          "order",
          "[search]") {
  // 2000 candidates with many equal costs, in a scrambled order; the
  // candidate returned must be the one the report ranks first.
  std::vector<int> ids(2000);
  for (int i = 0; i < 2000; ++i)
    ids[i] = (i * 7919) % 2000; // a permutation (7919 is prime)
  auto costOfId = [](int id) { return double((id * 37) % 101); };
  SearchSpec<int> spec;
  spec.name = "tuning";
  spec.enumerate = [&ids](llvm::function_ref<bool(int)> yield) {
    for (int id : ids)
      if (!yield(id))
        return;
  };
  spec.filters.push_back({"odd", [](const int &id) -> std::optional<std::string> {
                            if (id % 2)
                              return std::string("odd");
                            return std::nullopt;
                          }});
  spec.score = [&](const int &id) {
    return llvm::SmallVector<CostTerm>{{"time", costOfId(id), 1}};
  };
  // Zero-padded so that string order is numeric order.
  spec.describe = [](const int &id) {
    std::string s = std::to_string(id);
    return std::string(4 - s.size(), '0') + s;
  };
  SearchOptions options;
  options.reportTop = 7;
  SearchResult<int> result = search(spec, options);
  REQUIRE(result.succeeded());

  std::vector<int> survivors;
  for (int id = 0; id < 2000; id += 2)
    survivors.push_back(id);
  std::sort(survivors.begin(), survivors.end(), [&](int a, int b) {
    return std::make_pair(costOfId(a), a) < std::make_pair(costOfId(b), b);
  });
  CHECK(*result.winner == survivors[0]);
  CHECK(result.report.survivors == 1000);
  CHECK(result.report.filters[0].rejected == 1000);
  REQUIRE(result.report.top.size() == 7);
  for (size_t i = 0; i < 7; ++i)
    CHECK(result.report.top[i].description == spec.describe(survivors[i]));
}
