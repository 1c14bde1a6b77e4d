//===- Text.cpp - Windows of a plain-text file ----------------------------===//
//
// The host decoder of `format "text"` ingests: the bytes of a plain-text
// file, split at 90% (the first part trains, the last 10% validates, as
// the PyTorch peer of the character-level language model does), served as
// windows. An ingest of N-byte slots reads windows of N + 1 bytes that
// start `stride` bytes apart: sample k of a split is the window at byte
// k * stride, and a slot at shift s receives its bytes [s, s + N) -- shift
// 0 the model's inputs, shift 1 the next byte at every position. The
// executor's shuffled epoch order then draws the windows at random.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"

#include <cerrno>
#include <cinttypes>
#include <cstdio>

namespace synpl::rt::exec {

namespace {

/// Reads the whole file; a one-line error naming it when it is missing,
/// unreadable or empty.
int32_t readText(const std::string &path, std::vector<uint8_t> &out) {
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return failErrno(path.c_str(), "cannot open text file", errno);
  uint8_t buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
    out.insert(out.end(), buf, buf + n);
  int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err)
    return failErrno(path.c_str(), "cannot read text file", err);
  if (out.empty())
    return fail(SYNPL_RT_ERR_FORMAT, "%s: the text file is empty", path.c_str());
  return SYNPL_RT_OK;
}

} // namespace

bool planReadsText(const Plan &p) {
  for (int64_t i = 0; i < p.ingests.size; ++i)
    if (p.ingests[i].format == SYNPL_PLAN_FORMAT_TEXT)
      return true;
  return false;
}

int32_t openTextSplit(const Plan &p, const synpl_plan_ingest &g,
                      const std::string &path, bool validation, Split &split) {
  std::vector<uint8_t> bytes;
  if (int32_t st = readText(path, bytes))
    return st;
  uint64_t size = bytes.size();
  uint64_t cut = size * 9 / 10; // the peer's int(len * 0.9)
  uint64_t begin = validation ? cut : 0, end = validation ? size : cut;
  const synpl_plan_slot &first = p.slots[p.ingestFields[g.first_field].slot];
  int64_t window = first.elements / g.batch; // N
  uint64_t span = (uint64_t)window + 1;      // N inputs and the byte after
  if (end - begin < span)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: %" PRIu64 " bytes, so its %s split (the %s of the file) holds %" PRIu64
                " bytes, shorter than one window of %" PRIu64 " (the sequence of %" PRId64
                " and the byte after it)",
                path.c_str(), size, validation ? "validation" : "training",
                validation ? "last 10%" : "first 90%", end - begin, span, window);
  uint64_t samples = (end - begin - span) / (uint64_t)g.stride + 1;
  if (samples > UINT32_MAX)
    return fail(SYNPL_RT_ERR_FORMAT, "%s: too many windows", path.c_str());
  std::vector<uint8_t> part(bytes.begin() + (ptrdiff_t)begin, bytes.begin() + (ptrdiff_t)end);
  for (int64_t f = 0; f < g.num_fields; ++f) {
    const synpl_plan_ingest_field &fd = p.ingestFields[g.first_field + f];
    const synpl_plan_slot &slot = p.slots[fd.slot];
    if (slot.element != SYNPL_PLAN_U8 || slot.elements != window * g.batch)
      return fail(SYNPL_RT_ERR_FORMAT,
                  "%s: a text ingest reads bytes into slots of %" PRId64
                  " windows of %" PRId64 " bytes; slot %s is not one",
                  path.c_str(), g.batch, window, p.str(slot.name));
    Field field;
    field.slot = fd.slot;
    field.path = path;
    field.text = part;
    field.shift = fd.shift;
    field.sampleBytes = window;
    field.sampleStep = g.stride;
    split.fields.push_back(std::move(field));
  }
  split.samples = (int64_t)samples;
  split.order.resize(samples);
  for (uint64_t i = 0; i < samples; ++i)
    split.order[i] = (uint32_t)i;
  return SYNPL_RT_OK;
}

} // namespace synpl::rt::exec
