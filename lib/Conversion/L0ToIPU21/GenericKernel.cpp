//===- GenericKernel.cpp - One kernel on the generic codelet --------------===//
//
// A kernel that is not a bare product runs its own UOps. When its body is a
// fold (SplitFold.h), the search also weighs cutting the fold in two stages
// (boundary `IPU21 fold @<kernel>`): one stage (G = 1: the kernel's own
// plan), or G groups of the fold's iterations for each divisor G of its
// length up to the chip's tiles, each stage planned by the kernel planner;
// and when the fold is a matrix product the AMP takes (a product with an
// epilogue: a bias, an activation), the product on the AMP (the product
// planner's plan, into a C of its own) then the epilogue as the fold's
// second stage with one group. A stage without a plan rejects its option
// (`stage-plans`); the score is the stages' estimated cycles; the fewest
// win, one stage among equals.
//
//===----------------------------------------------------------------------===//
#include "Emit.h"
#include "SplitFold.h"

#include "llvm/Support/FormatVariadic.h"

#include <memory>

using namespace mlir;
using namespace synpl;
using namespace synpl::l0toipu21;

namespace {
/// One way to run the kernel: one stage; its fold in two; or its product
/// on the AMP (`amp`: stage 0 is the product, stage 1 the epilogue).
struct Option {
  int64_t groups = 1;
  bool amp = false;
  ipu21::CodeletOp codelets[2];
  std::unique_ptr<KernelModel> models[2];
  std::optional<search::SearchResult<KernelPlan>> plans[2];
  std::optional<MatmulKernel> product;
  std::optional<search::SearchResult<MatmulPlan>> productPlan;
  /// The transposes of the product's operands read transposed, run before
  /// it (`preA`: the first transposes A).
  struct Transpose {
    bool isA;
    ipu21::CodeletOp codelet;
    std::unique_ptr<KernelModel> model;
    std::optional<search::SearchResult<KernelPlan>> plan;
  };
  std::vector<Transpose> transposes;
  std::string unplanned; ///< why a stage has no plan ("" when all have one)
  int64_t cycles = 0;
  unsigned stages() const { return groups > 1 || amp ? 2 : 1; }
};

/// Plans stage `i` of `o` from its codelet.
void planStage(Option &o, unsigned i, const ipu21::Facts &facts, const TileBudget &budget) {
  std::string why;
  std::optional<KernelModel> m =
      KernelModel::build(*o.codelets[i].getUOpBody(), *o.codelets[i].getNumInputs(), why);
  if (!m) {
    o.unplanned = why;
    return;
  }
  o.models[i] = std::make_unique<KernelModel>(std::move(*m));
  StringRef name = o.codelets[i].getSymName();
  name.consume_back(".codelet");
  o.plans[i] = planKernel(*o.models[i], facts, budget, name);
  if (!o.plans[i]->succeeded())
    o.unplanned = o.plans[i]->failure().reason;
  else
    o.cycles += o.plans[i]->winner->totalCycles();
}

/// Divisors of n in [2, most], at most `cap` of them spread over the range.
SmallVector<int64_t> groupCounts(int64_t n, int64_t most, size_t cap) {
  SmallVector<int64_t> all;
  for (int64_t d = 2; d <= std::min(n, most); ++d)
    if (n % d == 0)
      all.push_back(d);
  if (all.size() <= cap)
    return all;
  SmallVector<int64_t> some;
  for (size_t i = 0; i < cap; ++i)
    some.push_back(all[i * (all.size() - 1) / (cap - 1)]);
  return some;
}
} // namespace

LogicalResult synpl::l0toipu21::lowerGenericKernel(OpBuilder &items, OpBuilder &steps,
                                                   l0uop::KernelOp kernel,
                                                   const ipu21::Facts &facts,
                                                   const TileBudget &budget, const Homes &homes) {
  std::string name = kernel.getSymName().str();
  Location loc = kernel.getLoc();
  Block &body = kernel.getBody().front();
  unsigned numInputs = kernel.getNumInputs(), numArgs = body.getNumArguments();

  std::vector<Option> options(1);
  options[0].codelets[0] = emitUOpCodelet(items, kernel, name);
  planStage(options[0], 0, facts, budget);
  ArrayRef<Attribute> fieldNames = options[0].codelets[0].getFieldNames()->getValue();
  std::optional<Fold> fold = findFold(*options[0].codelets[0].getUOpBody());
  if (fold)
    for (int64_t g : groupCounts(fold->trips, budget.tiles, 16)) {
      Option o;
      o.groups = g;
      TwoStages stages = buildTwoStages(items, *options[0].codelets[0].getUOpBody(), numInputs,
                                        fieldNames, *fold, g, name);
      o.codelets[0] = stages.first;
      o.codelets[1] = stages.second;
      planStage(o, 0, facts, budget);
      if (o.unplanned.empty())
        planStage(o, 1, facts, budget);
      options.push_back(std::move(o));
    }

  // The product on the AMP, when the fold is one it takes.
  std::string notProduct;
  if (fold && fold->reduces.size() == 1 && fold->parallel.size() == 2)
    if (FailureOr<MatmulKernel> mk = analyzeProduct(kernel, /*bare=*/false, notProduct);
        // The fold is the product's sum over K, its parallel RANGEs i then
        // j: the partial P[0, i, j] is C[i, j].
        succeeded(mk) && fold->trips == mk->shape.K &&
        fold->parallel[0].getTripCount() == mk->shape.M &&
        fold->parallel[1].getTripCount() == mk->shape.N &&
        mk->structure.ri->isBeforeInBlock(mk->structure.rj)) {
      Option o;
      o.amp = true;
      o.product = *mk;
      TwoStages stages = buildTwoStages(items, *options[0].codelets[0].getUOpBody(), numInputs,
                                        fieldNames, *fold, 1, name + ".amp");
      stages.first.erase();
      stages.second.setSymName(name + ".epilogue.codelet");
      o.codelets[1] = stages.second;
      o.productPlan = planMatmul(mk->shape, facts, budget, name + ".product");
      if (!o.productPlan->succeeded())
        o.unplanned = o.productPlan->failure().reason;
      else
        o.cycles += o.productPlan->winner->totalCycles();
      // An operand read transposed is transposed on the workers first.
      for (bool isA : {true, false}) {
        if (isA ? !mk->transA : !mk->transB)
          continue;
        unsigned arg = isA ? mk->structure.a.arg : mk->structure.b.arg;
        auto src = cast<l0uop::BufType>(body.getArgument(arg).getType());
        // A stored [K][M] becomes [M][K]; B stored [N][K] becomes [K][N].
        int64_t rows = isA ? mk->shape.K : mk->shape.N, cols = isA ? mk->shape.M : mk->shape.K;
        Option::Transpose t;
        t.isA = isA;
        t.codelet = emitTransposeCodelet(items, loc, name + (isA ? ".a_t" : ".b_t") + ".codelet",
                                         src, rows, cols);
        std::string why;
        std::optional<KernelModel> m =
            KernelModel::build(*t.codelet.getUOpBody(), 1, why);
        t.model = std::make_unique<KernelModel>(std::move(*m));
        t.plan = planKernel(*t.model, facts, budget, name + (isA ? ".a_t" : ".b_t"));
        if (!t.plan->succeeded() && o.unplanned.empty())
          o.unplanned = t.plan->failure().reason;
        else if (t.plan->succeeded())
          o.cycles += t.plan->winner->totalCycles();
        o.transposes.push_back(std::move(t));
      }
      if (o.unplanned.empty())
        planStage(o, 1, facts, budget);
      options.push_back(std::move(o));
    }

  // Which way: the search over the options built above.
  search::SearchSpec<size_t> spec;
  spec.name = "IPU21 fold @" + name;
  spec.enumerate = [&](llvm::function_ref<bool(size_t)> yield) {
    for (size_t i = 0; i < options.size(); ++i)
      if (!yield(i))
        return;
  };
  spec.filters.push_back({"stage-plans", [&](const size_t &i) -> std::optional<std::string> {
                            if (options[i].unplanned.empty())
                              return std::nullopt;
                            return options[i].unplanned;
                          }});
  spec.score = [&](const size_t &i) {
    SmallVector<search::CostTerm> terms;
    terms.push_back({"cycles", double(options[i].cycles), 1});
    terms.push_back({"stages", double(options[i].stages()), 0}); // reported, not weighed
    return terms;
  };
  spec.describe = [&](const size_t &i) {
    const Option &o = options[i];
    if (o.amp)
      return std::string("the product on the AMP, then the epilogue");
    if (o.groups == 1)
      return std::string("one stage");
    return llvm::formatv("the fold of {0} in {1} groups of {2}, then their {1} partials",
                         fold->trips, o.groups, fold->trips / o.groups)
        .str();
  };
  spec.tieBreakKey = [&](const size_t &i) {
    return llvm::formatv("{0} {1,8}", options[i].amp, options[i].groups).str();
  };
  search::SearchResult<size_t> result = search::search(spec, search::SearchOptions{});
  auto dropAll = [&](const Option *keep) {
    for (Option &o : options) {
      if (&o == keep)
        continue;
      for (ipu21::CodeletOp c : o.codelets)
        if (c)
          c.erase();
      for (Option::Transpose &t : o.transposes)
        t.codelet.erase();
    }
  };
  if (!result.succeeded()) {
    // Say why the kernel's own plan failed (the likeliest to read), then
    // why the search over the stages did.
    if (options[0].plans[0] && !options[0].plans[0]->succeeded())
      (void)search::emitSearchFailure(kernel, options[0].plans[0]->failure(),
                                      &options[0].plans[0]->report);
    else
      (void)search::emitSearchFailure(kernel, result.failure(), &result.report);
    search::recordSearchReport(std::move(result.report));
    dropAll(nullptr);
    return failure();
  }
  Option &won = options[*result.winner];
  if (fold)
    search::recordSearchReport(std::move(result.report));
  if (won.amp) {
    for (Option::Transpose &t : won.transposes)
      search::recordSearchReport(std::move(t.plan->report));
    search::recordSearchReport(std::move(won.productPlan->report));
  }
  for (unsigned i = won.amp ? 1 : 0; i < won.stages(); ++i)
    search::recordSearchReport(std::move(won.plans[i]->report));
  dropAll(&won);

  // Each stage's tiles start where the last kernel's left off (wrapping
  // when they would pass the chip's end).
  auto takeTiles = [&](int64_t n) {
    int64_t &next = *homes.nextTile;
    if (next + n > homes.chipTiles)
      next = 0;
    int64_t first = next;
    next = (next + n) % std::max<int64_t>(homes.chipTiles, 1);
    return first;
  };
  int64_t firstTile[2] = {0, 0};
  for (unsigned i = won.amp ? 1 : 0; i < won.stages(); ++i)
    firstTile[i] = takeTiles(won.plans[i]->winner->tiles());
  auto emit = [&](unsigned stage, StringRef suffix, ArrayRef<ipu21::TensorOp> fieldHomes) {
    KernelEmission e;
    e.firstTile = firstTile[stage];
    e.name = name + suffix.str();
    e.model = won.models[stage].get();
    e.plan = *won.plans[stage]->winner;
    e.homes.assign(fieldHomes.begin(), fieldHomes.end());
    e.codelet = won.codelets[stage];
    return emitKernel(items, loc, e, steps);
  };
  // A kernel output's home: where the stage that writes it writes, when it
  // is the first to need one.
  auto outputHomes = [&](unsigned stage, unsigned firstOutput) {
    for (unsigned a = numInputs; a < numArgs; ++a) {
      StringRef slot = kernel.getSlotOf(body.getArgument(a)).getValue();
      if (homes.has(slot))
        continue;
      if (auto flat = homeFromWindows(*won.models[stage], *won.plans[stage]->winner,
                                      firstOutput + (a - numInputs), firstTile[stage]))
        homes.make(slot, *flat);
    }
  };
  SmallVector<ipu21::TensorOp> inputs, outputs;
  if (won.amp) {
    // The product into a C of its own (its grid), then the epilogue reading
    // it as the fold's one partial.
    MatmulKernel &mk = *won.product;
    MatmulPlan plan = *won.productPlan->winner;
    MLIRContext *ctx = items.getContext();
    Type f32 = Float32Type::get(ctx);
    MatmulEmission m;
    m.name = name + ".product";
    m.a = homes.of(mk.a);
    m.b = homes.of(mk.b);
    for (Option::Transpose &t : won.transposes) {
      KernelEmission e;
      e.name = name + (t.isA ? ".a_t" : ".b_t");
      e.model = t.model.get();
      e.plan = *t.plan->winner;
      e.codelet = t.codelet;
      e.firstTile = takeTiles(e.plan.tiles());
      auto dst = cast<l0uop::BufType>(t.codelet.getUOpBody()->getArgument(1).getType());
      std::optional<SmallVector<int64_t>> flat = homeFromWindows(*e.model, e.plan, 1, e.firstTile);
      ipu21::TensorOp transposed = homes.makeTensor(
          name + (t.isA ? ".a_transposed" : ".b_transposed"),
          RankedTensorType::get(dst.getShape(), dst.getElementType()),
          flat ? ArrayRef<int64_t>(*flat) : ArrayRef<int64_t>());
      e.homes = {t.isA ? m.a : m.b, transposed};
      if (failed(emitKernel(items, loc, e, steps)))
        return failure();
      (t.isA ? m.a : m.b) = transposed;
    }
    m.c = homes.makeGridTensor(name + ".product.c",
                               RankedTensorType::get({mk.shape.M, mk.shape.N}, f32),
                               gridMapping(plan));
    m.amp = homes.fixedCodelet(ipu21::CodeletKind::amp_matmul, mk.elem, f32, kAmpCodeBytes);
    m.fill = homes.fixedCodelet(ipu21::CodeletKind::fill, f32, f32, kFillCodeBytes);
    if (plan.kSplit > 1)
      m.reduce = homes.fixedCodelet(ipu21::CodeletKind::reduce_add, f32, f32, kReduceCodeBytes);
    m.shape = mk.shape;
    m.plan = plan;
    emitMatmul(items, loc, m, steps);
    outputHomes(1, numInputs + 1);
    SmallVector<ipu21::TensorOp> epilogue;
    for (BlockArgument arg : body.getArguments().take_front(numInputs))
      epilogue.push_back(homes.of(kernel.getSlotOf(arg).getValue()));
    epilogue.push_back(m.c);
    for (BlockArgument arg : body.getArguments().drop_front(numInputs))
      epilogue.push_back(homes.of(kernel.getSlotOf(arg).getValue()));
    return emit(1, ".epilogue", epilogue);
  }
  if (won.groups == 1) {
    outputHomes(0, numInputs);
    for (BlockArgument arg : body.getArguments())
      inputs.push_back(homes.of(kernel.getSlotOf(arg).getValue()));
    return emit(0, "", inputs);
  }
  // Two stages: the outputs' homes from the second (which writes them), the
  // partials' from the first.
  unsigned numPartials = won.codelets[0].getNumUOpFields() - numArgs;
  outputHomes(1, numInputs + numPartials);
  SmallVector<ipu21::TensorOp> partials;
  for (unsigned r = 0; r < numPartials; ++r) {
    std::string tensor = name + ".partials" + std::to_string(r);
    auto buf = cast<l0uop::BufType>(won.codelets[0].getUOpBody()->getArgument(numArgs + r).getType());
    auto type = RankedTensorType::get(buf.getShape(), buf.getElementType());
    std::optional<SmallVector<int64_t>> flat =
        homeFromWindows(*won.models[0], *won.plans[0]->winner, numArgs + r, firstTile[0]);
    partials.push_back(homes.makeTensor(tensor, type, flat ? ArrayRef<int64_t>(*flat)
                                                           : ArrayRef<int64_t>()));
  }
  SmallVector<ipu21::TensorOp> first, second;
  for (BlockArgument arg : body.getArguments())
    first.push_back(homes.of(kernel.getSlotOf(arg).getValue()));
  first.append(partials);
  for (BlockArgument arg : body.getArguments().take_front(numInputs))
    second.push_back(homes.of(kernel.getSlotOf(arg).getValue()));
  second.append(partials);
  for (BlockArgument arg : body.getArguments().drop_front(numInputs))
    second.push_back(homes.of(kernel.getSlotOf(arg).getValue()));
  if (failed(emit(0, ".first", first)))
    return failure();
  return emit(1, ".second", second);
}
