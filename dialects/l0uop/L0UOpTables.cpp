//===- L0UOpTables.cpp - A plan's records in the runtime's tables ---------===//
#include "synpl/Dialect/L0UOp/L0UOpTables.h"

#include "mlir/IR/SymbolTable.h"

#include <cstring>

using namespace mlir;

namespace synpl::l0uop {

int64_t planElementCode(Type t) {
  if (t.isF32())
    return SYNPL_PLAN_F32;
  if (t.isF64())
    return SYNPL_PLAN_F64;
  if (t.isF16())
    return SYNPL_PLAN_F16;
  if (t.isBF16())
    return SYNPL_PLAN_BF16;
  if (auto i = dyn_cast<IntegerType>(t)) {
    switch (i.getWidth()) {
    case 1:
      return SYNPL_PLAN_I1;
    case 8:
      return i.isUnsigned() ? SYNPL_PLAN_U8 : SYNPL_PLAN_I8;
    case 16:
      return SYNPL_PLAN_I16;
    case 32:
      return SYNPL_PLAN_I32;
    case 64:
      return SYNPL_PLAN_I64;
    }
  }
  return SYNPL_PLAN_OTHER;
}

int64_t PlanTableWriter::str(StringRef s) {
  auto it = offsets.find(s);
  if (it != offsets.end())
    return it->second;
  int64_t off = strings.size();
  strings.append(s.begin(), s.end());
  strings.push_back('\0');
  offsets[s] = off;
  return off;
}

int64_t PlanTableWriter::slotIndex(StringRef name) const {
  auto it = slots.find(name);
  return it == slots.end() ? -1 : it->second;
}

int64_t PlanTableWriter::poolIndex(StringRef name) const {
  auto it = pools.find(name);
  return it == pools.end() ? -1 : it->second;
}

int64_t PlanTableWriter::addMemory(PlanOp plan, FailFn fail) {
  int64_t items = 0;
  Block &body = plan.getBody().front();
  for (auto pool : body.getOps<PoolOp>()) {
    ++items;
    pools[pool.getSymName()] = count(SYNPL_PLAN_POOLS);
    add(SYNPL_PLAN_POOLS,
        synpl_plan_pool{str(pool.getSymName()), (int64_t)pool.getKind(), (int64_t)pool.getSpace(),
                        (int64_t)pool.getCapacity(), (int64_t)pool.getAlignment()});
  }
  for (auto slot : body.getOps<SlotOp>()) {
    ++items;
    BufType buf = slot.getBufType();
    int64_t element = planElementCode(buf.getElementType());
    if (element == SYNPL_PLAN_OTHER)
      fail(slot, "its element type has no runtime code");
    slots[slot.getSymName()] = count(SYNPL_PLAN_SLOTS);
    add(SYNPL_PLAN_SLOTS,
        synpl_plan_slot{str(slot.getSymName()), poolIndex(slot.getPool()),
                        slot.getOffset() ? (int64_t)*slot.getOffset() : -1,
                        (int64_t)slot.getSize(), element, (int64_t)buf.getNumElements(),
                        slot.getShardRows().value_or(0)});
  }
  return items;
}

/// The IDX type byte of a slot's element code (0: none).
static int64_t idxTypeCode(int64_t element) {
  switch (element) {
  case SYNPL_PLAN_U8:
    return 0x08;
  case SYNPL_PLAN_I8:
    return 0x09;
  case SYNPL_PLAN_I16:
    return 0x0B;
  case SYNPL_PLAN_I32:
    return 0x0C;
  case SYNPL_PLAN_F32:
    return 0x0D;
  case SYNPL_PLAN_F64:
    return 0x0E;
  default:
    return 0;
  }
}

int64_t PlanTableWriter::addHostIO(PlanOp plan, FailFn fail) {
  int64_t items = 0;
  Block &body = plan.getBody().front();
  auto slotOf = [&](Attribute ref) {
    return slotIndex(cast<FlatSymbolRefAttr>(ref).getValue());
  };
  for (auto init : body.getOps<InitOp>()) {
    ++items;
    int64_t valueBits = 0;
    if (std::optional<APFloat> v = init.getValue()) {
      double d = v->convertToDouble();
      std::memcpy(&valueBits, &d, sizeof d);
    }
    add(SYNPL_PLAN_INITS,
        synpl_plan_init{(int64_t)init.getKind(), slotOf(init.getSlotAttr()),
                        init.getFanIn() ? (int64_t)*init.getFanIn() : 0,
                        init.getSeed() ? (int64_t)*init.getSeed() : 0, valueBits,
                        init.getPath() ? str(*init.getPath()) : -1});
  }
  for (auto ingest : body.getOps<IngestOp>()) {
    ++items;
    int64_t first = count(SYNPL_PLAN_INGEST_FIELDS);
    std::optional<ArrayRef<int64_t>> classes = ingest.getClasses();
    std::optional<ArrayRef<int64_t>> ranks = ingest.getRanks();
    std::optional<ArrayRef<int64_t>> shifts = ingest.getShifts();
    bool text = ingest.getFormat() == "text";
    for (auto [i, slot, path] : llvm::enumerate(ingest.getSlots(), ingest.getPaths())) {
      auto slotOp = SymbolTable::lookupNearestSymbolFrom<SlotOp>(ingest, cast<FlatSymbolRefAttr>(slot));
      BufType buf = slotOp.getBufType();
      int64_t typeCode = idxTypeCode(planElementCode(buf.getElementType()));
      if (!typeCode)
        fail(ingest, "slot element type has no IDX type");
      int64_t ndims = ranks ? (*ranks)[i] : IngestOp::fileRank(buf.getShape().drop_front());
      add(SYNPL_PLAN_INGEST_FIELDS,
          synpl_plan_ingest_field{slotOf(slot), str(cast<StringAttr>(path).getValue()),
                                  classes ? (*classes)[i] : 0,
                                  text ? 0 : (typeCode << 8) | ndims, shifts ? (*shifts)[i] : 0});
    }
    add(SYNPL_PLAN_INGESTS,
        synpl_plan_ingest{str(ingest.getSymName()),
                          text ? SYNPL_PLAN_FORMAT_TEXT : SYNPL_PLAN_FORMAT_IDX,
                          (int64_t)ingest.getBatch(), ingest.getShuffle(), ingest.getDropLast(),
                          (int64_t)ingest.getSeed(), first, (int64_t)ingest.getSlots().size(),
                          (int64_t)ingest.getStride().value_or(1),
                          (int64_t)ingest.getSharded()});
  }
  for (auto report : body.getOps<ReportOp>()) {
    ++items;
    add(SYNPL_PLAN_REPORTS, synpl_plan_report{str(report.getName()), slotOf(report.getSlotAttr())});
  }
  return items;
}

synpl_plan_header PlanTableWriter::headerOf(PlanOp plan) {
  synpl_plan_header head{};
  head.name = str(plan.getSymName());
  head.pipeline_depth = (int64_t)plan.getPipelineDepth();
  head.epochs = plan.getEpochs().value_or(0);
  head.checkpoint_every = plan.getCheckpointEvery().value_or(0);
  head.steps = plan.getSteps().value_or(0);
  head.ranks = plan.getRanks().value_or(1);
  head.evaluate = plan.getEvaluate() ? str(*plan.getEvaluate()) : -1;
  return head;
}

std::vector<int64_t> PlanTableWriter::finish(synpl_plan_header head) {
  head.magic = SYNPL_PLAN_MAGIC;
  head.version = SYNPL_PLAN_VERSION;
  std::vector<int64_t> words(SYNPL_PLAN_HEADER_WORDS, 0);
  static_assert(sizeof(synpl_plan_header) == SYNPL_PLAN_HEADER_WORDS * sizeof(int64_t),
                "the header is its words");
  for (int s = 0; s < SYNPL_PLAN_NUM_SECTIONS; ++s) {
    head.section[s][0] = words.size();
    head.section[s][1] = counts[s];
    words.insert(words.end(), sections[s].begin(), sections[s].end());
  }
  std::memcpy(words.data(), &head, sizeof head);
  return words;
}

std::string PlanTableWriter::takeStrings() {
  if (strings.empty())
    strings.push_back('\0');
  return std::move(strings);
}

} // namespace synpl::l0uop
