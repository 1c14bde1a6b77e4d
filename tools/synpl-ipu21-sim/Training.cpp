//===- Training.cpp - A training program's steps under the executor -------===//
#include "Training.h"

#include "synpl/Runtime/PlanFormat.h"
#include "synpl/Runtime/Runtime.h"

#include <cmath>
#include <cstring>

namespace synpl::ipu21::sim {
namespace {

/// A host slot's element `i` of `bytes` as a double.
double decode(int64_t element, const uint8_t *bytes, int64_t i) {
  auto load = [&](auto v) {
    std::memcpy(&v, bytes + i * int64_t(sizeof v), sizeof v);
    return double(v);
  };
  switch (element) {
  case SYNPL_PLAN_F32:
    return load(float());
  case SYNPL_PLAN_F64:
    return load(double());
  case SYNPL_PLAN_F16:
    return decodeElem(ElemType::F16, bytes + 2 * i);
  case SYNPL_PLAN_BF16: {
    uint16_t h;
    std::memcpy(&h, bytes + 2 * i, 2);
    uint32_t w = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &w, 4);
    return f;
  }
  case SYNPL_PLAN_I8:
    return load(int8_t());
  case SYNPL_PLAN_U8:
  case SYNPL_PLAN_I1:
    return load(uint8_t());
  case SYNPL_PLAN_I16:
    return load(int16_t());
  case SYNPL_PLAN_I32:
    return load(int32_t());
  case SYNPL_PLAN_I64:
    return load(int64_t());
  default:
    return NAN;
  }
}

/// `v` as element `i` of a host slot of type `element`.
void encode(int64_t element, double v, uint8_t *bytes, int64_t i) {
  auto store = [&](auto x) { std::memcpy(bytes + i * int64_t(sizeof x), &x, sizeof x); };
  switch (element) {
  case SYNPL_PLAN_F32:
    return store(float(v));
  case SYNPL_PLAN_F64:
    return store(v);
  case SYNPL_PLAN_F16:
    return encodeElem(ElemType::F16, v, bytes + 2 * i);
  case SYNPL_PLAN_BF16: {
    // v came from a bf16 slot's tensor, so it is exact; keep its top half.
    float f = float(v);
    uint32_t w;
    std::memcpy(&w, &f, 4);
    return store(uint16_t(w >> 16));
  }
  case SYNPL_PLAN_I8:
    return store(int8_t(v));
  case SYNPL_PLAN_U8:
  case SYNPL_PLAN_I1:
    return store(uint8_t(v));
  case SYNPL_PLAN_I16:
    return store(int16_t(v));
  case SYNPL_PLAN_I32:
    return store(int32_t(v));
  case SYNPL_PLAN_I64:
    return store(int64_t(v));
  default:
    return;
  }
}

/// The simulator as the executor's device.
struct Device {
  const Program &program;
  Simulator &sim;
  TrainingSummary &summary;
  std::string error;

  struct Slot {
    std::string name;
    int64_t element = 0, elements = 0;
    bool streamedIn = false, streamedOut = false;
  };
  std::vector<Slot> slots;
  /// Batches written for the next step, per ingest stream.
  StreamQueues pending;
  /// The last values each report stream gave.
  std::map<std::string, std::vector<double>, std::less<>> reported;

  Device(const Program &program, Simulator &sim, TrainingSummary &summary)
      : program(program), sim(sim), summary(summary) {
    sim.setStreamSource(queuedSource(pending));
    sim.setStreamSink([this](std::string_view stream, const std::vector<double> &values) {
      reported[std::string(stream)] = values;
    });
  }

  /// The slots of the host tables (the executor checked every record
  /// before its first call).
  void bind() {
    if (!slots.empty())
      return;
    const int64_t *words = program.hostTable.data();
    const auto *head = reinterpret_cast<const synpl_plan_header *>(words);
    auto section = [&](int s) { return words + head->section[s][0]; };
    auto count = [&](int s) { return head->section[s][1]; };
    const char *strings = program.hostStrings.data();
    const auto *slotRecords = reinterpret_cast<const synpl_plan_slot *>(section(SYNPL_PLAN_SLOTS));
    for (int64_t i = 0; i < count(SYNPL_PLAN_SLOTS); ++i)
      slots.push_back({strings + slotRecords[i].name, slotRecords[i].element,
                       slotRecords[i].elements});
    const auto *fields =
        reinterpret_cast<const synpl_plan_ingest_field *>(section(SYNPL_PLAN_INGEST_FIELDS));
    for (int64_t i = 0; i < count(SYNPL_PLAN_INGEST_FIELDS); ++i)
      slots[fields[i].slot].streamedIn = true;
    const auto *reports = reinterpret_cast<const synpl_plan_report *>(section(SYNPL_PLAN_REPORTS));
    for (int64_t i = 0; i < count(SYNPL_PLAN_REPORTS); ++i)
      slots[reports[i].slot].streamedOut = true;
  }

  int32_t failWith(std::string message) {
    error = std::move(message);
    return SYNPL_RT_ERR_DEVICE;
  }

  int32_t write(int64_t index, const void *src, uint64_t bytes) {
    bind();
    const Slot &s = slots[index];
    std::vector<double> values(size_t(s.elements));
    for (int64_t i = 0; i < s.elements; ++i)
      values[i] = decode(s.element, static_cast<const uint8_t *>(src), i);
    (void)bytes; // the executor passes the slot's size
    if (s.streamedIn) {
      pending[s.name].push_back(std::move(values));
      return SYNPL_RT_OK;
    }
    std::string why;
    if (!sim.setTensor(s.name, values, why))
      return failWith("tensor " + s.name + ": " + why);
    return SYNPL_RT_OK;
  }

  int32_t read(int64_t index, void *dst, uint64_t bytes) {
    bind();
    const Slot &s = slots[index];
    std::vector<double> values;
    auto it = reported.find(s.name);
    if (s.streamedOut && it != reported.end()) {
      values = it->second;
    } else {
      std::string why;
      if (!sim.getTensor(s.name, values, why))
        return failWith("tensor " + s.name + ": " + why);
    }
    if (int64_t(values.size()) != s.elements)
      return failWith("tensor " + s.name + " holds " + std::to_string(values.size()) +
                      " values; its slot " + std::to_string(s.elements));
    std::memset(dst, 0, bytes);
    for (int64_t i = 0; i < s.elements; ++i)
      encode(s.element, values[i], static_cast<uint8_t *>(dst), i);
    return SYNPL_RT_OK;
  }

  int32_t step(bool train) {
    int64_t before = sim.report().totalCycles;
    std::string why;
    if (!sim.run(why))
      return failWith(why);
    int64_t cycles = sim.report().totalCycles - before;
    (train ? summary.trainSteps : summary.evalSteps) += 1;
    (train ? summary.trainCycles : summary.evalCycles) += cycles;
    // Every batch written for this step was streamed in.
    for (auto &entry : pending)
      if (!entry.second.empty())
        return failWith("the step left a batch of stream " + entry.first +
                        " unread: main streams each ingest's slots in once per step");
    return SYNPL_RT_OK;
  }
};

} // namespace

Simulator::StreamSource queuedSource(StreamQueues &queues) {
  return [&queues](std::string_view stream, std::vector<double> &out) {
    auto it = queues.find(stream);
    if (it == queues.end() || it->second.empty())
      return false;
    out = std::move(it->second.front());
    it->second.pop_front();
    return true;
  };
}

int runTraining(const Program &program, Simulator &sim, const std::vector<std::string> &args,
                TrainingSummary &summary) {
  synpl_plan_desc desc{};
  desc.table = program.hostTable.data();
  desc.table_words = int64_t(program.hostTable.size());
  desc.strings = program.hostStrings.data();
  desc.strings_size = int64_t(program.hostStrings.size());
  static void *const none[1] = {nullptr}; // no kernels, no control programs
  desc.kernels = none;
  desc.programs = none;
  Device device(program, sim, summary);
  synpl_rt_device d{};
  d.ctx = &device;
  d.name = "the ipu21 simulator";
  d.write_slot = [](void *ctx, int64_t slot, const void *src, uint64_t bytes) {
    return static_cast<Device *>(ctx)->write(slot, src, bytes);
  };
  d.read_slot = [](void *ctx, int64_t slot, void *dst, uint64_t bytes) {
    return static_cast<Device *>(ctx)->read(slot, dst, bytes);
  };
  d.step = [](void *ctx, int32_t train) { return static_cast<Device *>(ctx)->step(train != 0); };
  d.last_error = [](void *ctx) { return static_cast<Device *>(ctx)->error.c_str(); };
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  return synpl_rt_main_device(int(args.size()), argv.data(), &desc, &d);
}

} // namespace synpl::ipu21::sim
