//===- Train.cpp - synpl-interp --train: a training run on the interpreter ===//
//
// The epoch loop a compiled program's runtime runs (lib/Runtime/EpochLoop.cpp,
// docs/training.md), with every step computed by the reference interpreter:
//
//   * the data: the program's one l1.read_batch, its fields' IDX files read
//     here (zlib; none of the runtime's decoding), by the compiled path or by
//     name under --data (docs/data-binding.md: `train-F-idxN-ubyte[.gz]`;
//     the test split's `t10k-*` beside them); a float field's bytes become
//     x / 255, other integers their value; padding rows of a last partial
//     batch are zero (a one-byte label 255, outside any class);
//   * the order: each epoch's is the runtime's synpl_rt_epoch_permutation of
//     (seed, epoch - 1) (its own properties are checked against the IDX
//     files by test/Runtime/trace-batches.test), or the file order;
//   * the state: as the runtime initializes it (below: the L1 -> L0 plan's
//     init seeds 1, 2, ... in declaration order, U(-b, b) drawn from
//     splitmix64, rounded to f32; planned_steps = steps x epochs;
//     training_mode 1 while training, 0 while evaluating), so both runs
//     start from the same weights -- the comparison is of everything after;
//   * a step: the stage holding the read_batch, then what it forwards to:
//     stages (a transfer is the value itself), tensor graphs (interpreted;
//     their results go to their `then` stage), reports, sends (the handler
//     interpreted; none while evaluating).
//
// Epoch lines as the runtime prints them (without the speed):
//   epoch=E loss=L test_accuracy=A
// and with --metrics FILE a line per step as the runtime's --metrics writes
// it: {"kind":"step","step":S,"epoch":E,"loss":L}.
//
// A program that reads text (fields of format text: lib/Runtime/Text.cpp's
// windows, the first 90% of the file training, the last 10% validating)
// runs StreamLoop.cpp's loop instead: `steps` steps drawing windows in the
// order of the pass they fall in (synpl_rt_epoch_permutation(seed, pass)),
// and with --eval, every --report-every steps (default a fifth of the run)
// and at the end, the mean loss over --eval-batches (default 20) batches of
// validation windows in one fixed order (seed + 1, epoch 0):
//   step=S loss=L val_loss=V
//   done steps=S val_loss=V
//
//===----------------------------------------------------------------------===//
#include "Train.h"

#include "synpl/Dialect/L1/L1Ops.h"
#include "synpl/Reference/L1Interpreter.h"
#include "synpl/Runtime/Runtime.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <zlib.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <sys/stat.h>

using namespace mlir;
using namespace synpl;

namespace synpl::interp {
namespace {

bool fileExists(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

/// An IDX file's samples as doubles.
struct IdxFile {
  std::string path;
  int type = 0; // 0x08 u8, 0x09 i8, 0x0C i32, 0x0D f32
  int64_t samples = 0, sampleElems = 0;
  std::vector<uint8_t> bytes; // the payload, big-endian as in the file
  int elemBytes() const { return type == 0x0C || type == 0x0D ? 4 : 1; }
  double at(int64_t i) const {
    const uint8_t *p = bytes.data() + i * elemBytes();
    switch (type) {
    case 0x08:
      return p[0];
    case 0x09:
      return (int8_t)p[0];
    default: {
      uint32_t w = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
      if (type == 0x0C)
        return (int32_t)w;
      float f;
      std::memcpy(&f, &w, 4);
      return f;
    }
    }
  }
};

bool readIdx(const std::string &path, IdxFile &f) {
  f.path = path;
  gzFile in = gzopen(path.c_str(), "rb"); // plain files read through too
  if (!in) {
    llvm::errs() << "error: " << path << ": cannot open\n";
    return false;
  }
  std::vector<uint8_t> all;
  uint8_t buf[1 << 16];
  int n;
  while ((n = gzread(in, buf, sizeof buf)) > 0)
    all.insert(all.end(), buf, buf + n);
  gzclose(in);
  if (n < 0 || all.size() < 4 || all[0] || all[1]) {
    llvm::errs() << "error: " << path << ": not an IDX file\n";
    return false;
  }
  f.type = all[2];
  int rank = all[3];
  if ((f.type != 0x08 && f.type != 0x09 && f.type != 0x0C && f.type != 0x0D) || rank < 1 ||
      all.size() < 4 + 4 * (size_t)rank) {
    llvm::errs() << "error: " << path << ": unsupported IDX type or rank\n";
    return false;
  }
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    const uint8_t *p = all.data() + 4 + 4 * d;
    int64_t v = (int64_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
    if (d == 0)
      f.samples = v;
    count *= v;
  }
  f.sampleElems = f.samples ? count / f.samples : 0;
  size_t header = 4 + 4 * (size_t)rank;
  if (all.size() - header < (size_t)(count * f.elemBytes())) {
    llvm::errs() << "error: " << path << ": truncated IDX data\n";
    return false;
  }
  f.bytes.assign(all.begin() + header, all.begin() + header + count * f.elemBytes());
  return true;
}

/// The runtime's splitmix64 stream (lib/Runtime/Internal.h) for the inits.
uint64_t splitmix64(uint64_t &x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class Trainer {
public:
  Trainer(ModuleOp module, const TrainOptions &o) : module(module), o(o) {}
  int run();

private:
  LogicalResult setUp();
  LogicalResult openText();
  bool openSplit(const std::string &prefix, std::vector<IdxFile> &files);
  void initState(double plannedSteps);
  void setTrainingMode(double v);
  /// Batch `b` of `files` in `order` as the read_batch's result tensors.
  SmallVector<ref::Tensor> gather(const std::vector<IdxFile> &files,
                                  const std::vector<uint32_t> &order, int64_t b);
  /// The text of a text ingest: the split's windows as the fields' tensors.
  SmallVector<ref::Tensor> gatherText(const std::vector<uint8_t> &part,
                                      const std::vector<uint32_t> &order, int64_t b);
  int runText();
  /// One step on `batch` (training, or evaluating: no sends) from the stage
  /// holding the read_batch; its `metric` report (NaN when none).
  FailureOr<double> step(SmallVector<ref::Tensor> batch, bool training, StringRef metric);
  LogicalResult runStage(l1::StageOp stage, ArrayRef<ref::Tensor> args);
  LogicalResult forward(Operation *from, FlatSymbolRefAttr target,
                        ArrayRef<ref::Tensor> args);

  ModuleOp module;
  const TrainOptions &o;
  l1::ReadBatchOp readBatch;
  l1::ScheduleOp schedule;
  SmallVector<l1::FieldOp> fields;
  std::vector<IdxFile> train, test;
  /// A text ingest: the file's two splits, the window, stride and shifts.
  bool text = false;
  std::vector<uint8_t> textTrain, textVal;
  int64_t window = 0, stride = 1;
  SmallVector<int64_t> shifts;
  ref::StateEnv state;
  SmallVector<std::pair<std::string, std::string>> trainingModeFields;
  /// The batch of the step in progress, the reports of its stages.
  SmallVector<ref::Tensor> batch;
  std::map<std::string, double> reports;
  bool evaluating = false;
};

bool Trainer::openSplit(const std::string &prefix, std::vector<IdxFile> &files) {
  for (l1::FieldOp f : fields) {
    std::string path = f.getPath().str();
    if (path.empty()) {
      // The folder rule: train-F-idxN-ubyte, N = 1 + the non-unit dims.
      int64_t rank = 1;
      for (int64_t d : cast<RankedTensorType>(f.getType()).getShape())
        rank += d != 1;
      path = "train-" + f.getSymName().str() + "-idx" + std::to_string(rank) + "-ubyte";
    }
    if (!o.dataDir.empty() || path[0] != '/') {
      if (o.dataDir.empty()) {
        llvm::errs() << "error: " << path << ": a field bound when the program runs: pass --data DIR\n";
        return false;
      }
      size_t slash = path.rfind('/');
      path = o.dataDir + "/" + (slash == std::string::npos ? path : path.substr(slash + 1));
    }
    if (prefix != "train") {
      size_t base = path.rfind('/') + 1;
      if (path.compare(base, 5, "train") != 0) {
        llvm::errs() << "error: " << path << ": no test split named after it\n";
        return false;
      }
      path = path.substr(0, base) + prefix + path.substr(base + 5);
    }
    if (!fileExists(path) && fileExists(path + ".gz"))
      path += ".gz";
    else if (!fileExists(path) && path.size() > 3 && path.substr(path.size() - 3) == ".gz" &&
             fileExists(path.substr(0, path.size() - 3)))
      path = path.substr(0, path.size() - 3);
    IdxFile file;
    if (!readIdx(path, file))
      return false;
    auto buf = cast<l1::BufType>(readBatch->getResult(files.size()).getType());
    int64_t per = buf.getTensor().getNumElements() / readBatch.getBatch();
    if (file.sampleElems != per) {
      llvm::errs() << "error: " << path << ": samples of " << file.sampleElems
                   << " elements, the program reads " << per << "\n";
      return false;
    }
    if (!files.empty() && file.samples != files[0].samples) {
      llvm::errs() << "error: " << path << ": another number of samples than "
                   << files[0].path << "\n";
      return false;
    }
    files.push_back(std::move(file));
  }
  return true;
}

LogicalResult Trainer::setUp() {
  SmallVector<l1::ReadBatchOp> reads;
  module.walk([&](l1::ReadBatchOp op) { reads.push_back(op); });
  SmallVector<l1::ScheduleOp> schedules(module.getOps<l1::ScheduleOp>());
  if (reads.size() != 1 || schedules.size() != 1) {
    llvm::errs() << "error: --train runs a program of one l1.read_batch and one "
                    "l1.schedule\n";
    return failure();
  }
  readBatch = reads[0];
  schedule = schedules[0];
  auto data = SymbolTable::lookupNearestSymbolFrom<l1::DataOp>(readBatch,
                                                               readBatch.getSourceAttr());
  if (!data)
    return readBatch.emitError("no l1.data @") << readBatch.getSource();
  for (Attribute a : readBatch.getFields()) {
    auto f = dyn_cast_or_null<l1::FieldOp>(
        SymbolTable::lookupSymbolIn(data, cast<FlatSymbolRefAttr>(a).getAttr()));
    if (!f)
      return readBatch.emitError("no field ") << a;
    fields.push_back(f);
  }
  text = fields[0].getFormat() == l1::DataFormat::text;
  if (text)
    return openText();
  for (l1::FieldOp f : fields)
    if (f.getFormat() != l1::DataFormat::idx)
      return f.emitError("--train reads fields of one format");
  if (!openSplit("train", train))
    return failure();
  if (o.evaluate && !openSplit("t10k", test))
    return failure();
  return success();
}

LogicalResult Trainer::openText() {
  std::string path = fields[0].getPath().str();
  for (l1::FieldOp f : fields) {
    if (f.getFormat() != l1::DataFormat::text || f.getPath() != fields[0].getPath())
      return f.emitError("--train reads the text fields of one file");
    shifts.push_back((int64_t)f.getShift().value_or(0));
  }
  stride = (int64_t)fields[0].getStride().value_or(1);
  window = cast<l1::BufType>(readBatch->getResult(0).getType()).getTensor().getNumElements() /
           readBatch.getBatch();
  if (!o.dataDir.empty()) {
    size_t slash = path.rfind('/');
    path = o.dataDir + "/" + (slash == std::string::npos ? path : path.substr(slash + 1));
  }
  std::FILE *in = std::fopen(path.c_str(), "rb");
  if (!in) {
    llvm::errs() << "error: " << path << ": cannot open\n";
    return failure();
  }
  std::vector<uint8_t> all;
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, in)) > 0)
    all.insert(all.end(), buf, buf + n);
  std::fclose(in);
  size_t cut = all.size() * 9 / 10;
  textTrain.assign(all.begin(), all.begin() + cut);
  textVal.assign(all.begin() + cut, all.end());
  if (textTrain.size() < (size_t)window + 1 || textVal.size() < (size_t)window + 1) {
    llvm::errs() << "error: " << path << ": a split shorter than one window\n";
    return failure();
  }
  return success();
}

SmallVector<ref::Tensor> Trainer::gatherText(const std::vector<uint8_t> &part,
                                             const std::vector<uint32_t> &order, int64_t b) {
  SmallVector<ref::Tensor> out;
  int64_t rows = readBatch.getBatch();
  for (auto [k, shift] : llvm::enumerate(shifts)) {
    auto type = cast<l1::BufType>(readBatch->getResult(k).getType()).getTensor();
    ref::Tensor t(*ref::ElementType::get(type.getElementType()), type.getShape());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < window; ++j)
        t[r * window + j] = part[(size_t)order[b * rows + r] * stride + shift + j];
    out.push_back(std::move(t));
  }
  return out;
}

FailureOr<double> Trainer::step(SmallVector<ref::Tensor> in, bool training,
                                StringRef metric) {
  batch = std::move(in);
  reports.clear();
  evaluating = !training;
  if (failed(runStage(readBatch->getParentOfType<l1::StageOp>(), {})))
    return failure();
  evaluating = false;
  auto it = reports.find(metric.str());
  return it == reports.end() ? NAN : it->second;
}

int Trainer::runText() {
  int64_t rows = readBatch.getBatch();
  uint64_t seed = (uint64_t)readBatch.getSeed().value_or(0);
  bool shuffle = readBatch.getOrder() == l1::BatchOrder::shuffle;
  auto windows = [&](const std::vector<uint8_t> &part) {
    return (int64_t)((part.size() - window - 1) / stride + 1);
  };
  int64_t n = windows(textTrain), nVal = windows(textVal);
  int64_t perPass = std::max<int64_t>(1, n / rows);
  int64_t steps = o.steps > 0 ? o.steps : (int64_t)schedule.getSteps().value_or(0);
  if (steps <= 0)
    steps = perPass;
  int64_t every = o.reportEvery > 0 ? o.reportEvery : std::max<int64_t>(1, steps / 5);
  int64_t evalBatches = std::min(o.evalBatches > 0 ? o.evalBatches : 20, nVal / rows);
  initState((double)steps);
  std::FILE *metrics = nullptr;
  if (!o.metricsPath.empty() && !(metrics = std::fopen(o.metricsPath.c_str(), "w"))) {
    llvm::errs() << "error: cannot write " << o.metricsPath << "\n";
    return 1;
  }
  std::vector<uint32_t> order(n), valOrder(nVal);
  synpl_rt_epoch_permutation(seed + 1, 0, (uint32_t)nVal, valOrder.data());
  double sum = 0, val = NAN;
  int64_t count = 0;
  auto validate = [&]() -> LogicalResult {
    if (!o.evaluate || evalBatches <= 0)
      return success();
    setTrainingMode(0.0);
    double total = 0;
    for (int64_t b = 0; b < evalBatches; ++b) {
      FailureOr<double> l = step(gatherText(textVal, valOrder, b), false, "loss");
      if (failed(l))
        return failure();
      total += *l;
    }
    setTrainingMode(1.0);
    val = total / (double)evalBatches;
    return success();
  };
  for (int64_t s = 0; s < steps; ++s) {
    int64_t pass = s / perPass, b = s % perPass;
    if (b == 0) {
      if (shuffle)
        synpl_rt_epoch_permutation(seed, (uint64_t)pass, (uint32_t)n, order.data());
      else
        for (int64_t i = 0; i < n; ++i)
          order[i] = (uint32_t)i;
    }
    FailureOr<double> loss = step(gatherText(textTrain, order, b), true, "loss");
    if (failed(loss))
      return 1;
    sum += *loss;
    ++count;
    if (metrics)
      std::fprintf(metrics, "{\"kind\":\"step\",\"step\":%lld,\"epoch\":1,\"loss\":%.9g}\n",
                   (long long)(s + 1), *loss);
    if ((s + 1) % every == 0 || s + 1 == steps) {
      if (failed(validate()))
        return 1;
      std::printf("step=%lld loss=%.4f val_loss=%.4f\n", (long long)(s + 1), sum / count, val);
      sum = 0;
      count = 0;
    }
    if (s + 1 == o.stopAfter) {
      if (metrics)
        std::fclose(metrics);
      return 0;
    }
  }
  std::printf("done steps=%lld val_loss=%.4f\n", (long long)steps, val);
  if (metrics)
    std::fclose(metrics);
  return 0;
}

/// The runtime's inits (lib/Runtime/Ingest.cpp runInit, with the seeds and
/// fan-ins lib/Conversion/L1ToL0/Plan.cpp gives them).
void Trainer::initState(double plannedSteps) {
  int64_t seed = 0;
  for (auto actor : module.getOps<l1::ActorOp>())
    for (auto st : actor.getBody().getOps<l1::StateOp>()) {
      auto type = cast<RankedTensorType>(st.getType());
      ref::ElementType et = *ref::ElementType::get(type.getElementType());
      ref::Tensor t(et, type.getShape());
      int64_t n = t.size();
      switch (st.getInit()) {
      case l1::InitKind::zeros:
        break;
      case l1::InitKind::ones:
        t.data().assign(n, 1.0);
        break;
      case l1::InitKind::planned_steps:
        t.data().assign(n, plannedSteps);
        break;
      case l1::InitKind::rank: // one process: rank 0
        break;
      case l1::InitKind::training_mode:
        t.data().assign(n, 1.0);
        trainingModeFields.push_back({actor.getSymName().str(), st.getSymName().str()});
        break;
      case l1::InitKind::kaiming:
      case l1::InitKind::xavier: {
        uint64_t x = (uint64_t)++seed * 0xD1B54A32D192ED03ull + 1;
        double fanIn = type.getRank() ? (double)type.getShape()[0] : 1.0;
        double bound = st.getInit() == l1::InitKind::kaiming
                           ? std::sqrt(6.0 / fanIn)
                           : std::sqrt(6.0 / (fanIn + (double)n / fanIn));
        for (int64_t i = 0; i < n; ++i)
          t[i] = (float)((2.0 * ((splitmix64(x) >> 11) * 0x1.0p-53) - 1.0) * bound);
        break;
      }
      }
      state.set(actor.getSymName(), st.getSymName(), std::move(t));
    }
}

void Trainer::setTrainingMode(double v) {
  for (auto &[actor, field] : trainingModeFields)
    state.lookup(actor, field)->data().assign(1, v);
}

SmallVector<ref::Tensor> Trainer::gather(const std::vector<IdxFile> &files,
                                         const std::vector<uint32_t> &order, int64_t b) {
  SmallVector<ref::Tensor> out;
  int64_t rows = readBatch.getBatch();
  for (auto [k, f] : llvm::enumerate(files)) {
    auto type = cast<l1::BufType>(readBatch->getResult(k).getType()).getTensor();
    ref::ElementType et = *ref::ElementType::get(type.getElementType());
    ref::Tensor t(et, type.getShape());
    bool unit = et.isFloat() && f.type == 0x08;
    double pad = f.sampleElems == 1 && et.isInteger() && et.width == 8 ? 255.0 : 0.0;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t i = b * rows + r;
      for (int64_t e = 0; e < f.sampleElems; ++e)
        t[r * f.sampleElems + e] =
            i < f.samples ? (unit ? f.at(order[i] * f.sampleElems + e) / 255.0
                                  : f.at(order[i] * f.sampleElems + e))
                          : pad;
    }
    out.push_back(std::move(t));
  }
  return out;
}

LogicalResult Trainer::forward(Operation *from, FlatSymbolRefAttr target,
                               ArrayRef<ref::Tensor> args) {
  Operation *op = SymbolTable::lookupNearestSymbolFrom(from, target);
  if (auto stage = dyn_cast_or_null<l1::StageOp>(op))
    return runStage(stage, args);
  auto graph = dyn_cast_or_null<l1::TensorGraphOp>(op);
  if (!graph)
    return from->emitError("--train: forward to ") << target << ", not a stage or graph";
  auto results = ref::interpretTensorGraph(graph, args, state);
  if (failed(results))
    return failure();
  if (auto then = graph.getThenAttr())
    return forward(graph, then, *results);
  return success();
}

LogicalResult Trainer::runStage(l1::StageOp stage, ArrayRef<ref::Tensor> args) {
  if (!stage.getBody().hasOneBlock())
    return stage.emitError("--train runs stages of one block");
  Block &body = stage.getBody().front();
  llvm::DenseMap<Value, ref::Tensor> values;
  for (auto [arg, t] : llvm::zip(body.getArguments(), args))
    values[arg] = t;
  auto operands = [&](ValueRange vs) {
    SmallVector<ref::Tensor> ts;
    for (Value v : vs)
      ts.push_back(values.lookup(v));
    return ts;
  };
  for (Operation &op : body) {
    if (auto rb = dyn_cast<l1::ReadBatchOp>(op)) {
      for (auto [r, t] : llvm::zip(rb.getResults(), batch))
        values[r] = t;
    } else if (auto tr = dyn_cast<l1::TransferOp>(op)) {
      values[tr.getResult()] = values.lookup(tr.getSource());
    } else if (auto fw = dyn_cast<l1::ForwardOp>(op)) {
      if (failed(forward(fw, fw.getTargetAttr(), operands(fw.getArgs()))))
        return failure();
    } else if (auto rep = dyn_cast<l1::ReportOp>(op)) {
      const ref::Tensor &t = values[rep.getValue()];
      if (t.size() != 1)
        return rep.emitError("--train reports scalars");
      reports[rep.getMetric().str()] = t[0];
    } else if (auto send = dyn_cast<l1::SendOp>(op)) {
      if (evaluating)
        continue;
      auto handler = dyn_cast_or_null<l1::HandlerOp>(
          SymbolTable::lookupNearestSymbolFrom(send, send.getTarget()));
      if (!handler)
        return send.emitError("no handler ") << send.getTarget();
      if (failed(ref::interpretHandler(handler, operands(send.getArgs()), state)))
        return failure();
    } else if (isa<l1::DropOp>(op)) {
    } else if (isa<l1::EndOp>(op)) {
      break;
    } else {
      return op.emitError("--train does not run this op in a stage");
    }
  }
  return success();
}

int Trainer::run() {
  if (failed(setUp()))
    return 1;
  if (text)
    return runText();
  int64_t rows = readBatch.getBatch();
  bool dropLast = readBatch.getDropLast();
  bool shuffle = readBatch.getOrder() == l1::BatchOrder::shuffle;
  uint64_t seed = (uint64_t)readBatch.getSeed().value_or(0);
  int64_t n = train[0].samples;
  int64_t perEpoch = dropLast ? n / rows : (n + rows - 1) / rows;
  int64_t steps = o.steps > 0 ? o.steps : schedule.getSteps().value_or(0);
  steps = steps > 0 ? std::min(steps, perEpoch) : perEpoch;
  int64_t epochs = o.epochs > 0 ? o.epochs : schedule.getEpochs().value_or(1);
  if (steps == 0) {
    llvm::errs() << "error: " << train[0].path << ": fewer samples than one batch\n";
    return 1;
  }
  initState((double)(steps * epochs));
  std::FILE *metrics = nullptr;
  if (!o.metricsPath.empty() && !(metrics = std::fopen(o.metricsPath.c_str(), "w"))) {
    llvm::errs() << "error: cannot write " << o.metricsPath << "\n";
    return 1;
  }
  std::vector<uint32_t> order(n), testOrder(o.evaluate ? test[0].samples : 0);
  for (size_t i = 0; i < testOrder.size(); ++i)
    testOrder[i] = (uint32_t)i;
  int64_t globalStep = 0;
  for (int64_t epoch = 1; epoch <= epochs; ++epoch) {
    if (shuffle)
      synpl_rt_epoch_permutation(seed, (uint64_t)(epoch - 1), (uint32_t)n, order.data());
    else
      for (int64_t i = 0; i < n; ++i)
        order[i] = (uint32_t)i;
    double lossSum = 0;
    for (int64_t b = 0; b < steps; ++b) {
      FailureOr<double> loss = step(gather(train, order, b), true, "loss");
      if (failed(loss))
        return 1;
      ++globalStep;
      lossSum += *loss;
      if (metrics)
        std::fprintf(metrics, "{\"kind\":\"step\",\"step\":%lld,\"epoch\":%lld,\"loss\":%.9g}\n",
                     (long long)globalStep, (long long)epoch, *loss);
      if (globalStep == o.stopAfter)
        break;
    }
    if (globalStep == o.stopAfter && globalStep % steps != 0)
      break; // mid-epoch: no epoch line
    std::string accuracy = "none";
    if (o.evaluate) {
      setTrainingMode(0.0);
      int64_t testBatches = (test[0].samples + rows - 1) / rows;
      if (o.evalBatches > 0)
        testBatches = std::min(testBatches, o.evalBatches);
      double correct = 0;
      int64_t seen = 0;
      for (int64_t b = 0; b < testBatches; ++b) {
        FailureOr<double> hits = step(gather(test, testOrder, b), false, "correct");
        if (failed(hits))
          return 1;
        correct += *hits;
        seen += std::min<int64_t>(rows, test[0].samples - b * rows);
      }
      setTrainingMode(1.0);
      char acc[32];
      std::snprintf(acc, sizeof acc, "%.4f", correct / (double)seen);
      if (!std::isnan(correct)) // no `correct` report: none, as the runtime says
        accuracy = acc;
    }
    std::printf("epoch=%lld loss=%.6f test_accuracy=%s\n", (long long)epoch,
                lossSum / (double)steps, accuracy.c_str());
    std::fflush(stdout);
    if (globalStep == o.stopAfter)
      break;
  }
  if (metrics)
    std::fclose(metrics);
  return 0;
}

} // namespace

int train(ModuleOp module, const TrainOptions &options) {
  return Trainer(module, options).run();
}

} // namespace synpl::interp
