//===- RuntimeDataTest.cpp - file reads, IDX decoding, shuffling, batching -===//

#include "synpl/Runtime/Runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>
#include <zlib.h>

namespace {

// A scratch directory per test run, removed at exit.
struct TempDir {
  std::string path;
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") +
                       "/synpl-runtime-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    REQUIRE(mkdtemp(buf.data()) != nullptr);
    path = buf.data();
  }
  ~TempDir() {
    std::string cmd = "rm -rf '" + path + "'";
    (void)std::system(cmd.c_str());
  }
  std::string file(const std::string &name) const { return path + "/" + name; }
};

using Bytes = std::vector<uint8_t>;

void putBE32(Bytes &b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8)
    b.push_back(uint8_t(v >> s));
}

Bytes idxBytes(uint8_t type, const std::vector<uint32_t> &dims,
               const Bytes &payload) {
  Bytes b{0, 0, type, uint8_t(dims.size())};
  for (uint32_t d : dims)
    putBE32(b, d);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

void writeRaw(const std::string &path, const Bytes &bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char *>(bytes.data()), std::streamsize(bytes.size()));
  REQUIRE(out.good());
}

void writeGz(const std::string &path, const Bytes &bytes) {
  gzFile gz = gzopen(path.c_str(), "wb");
  REQUIRE(gz != nullptr);
  REQUIRE(gzwrite(gz, bytes.data(), unsigned(bytes.size())) == int(bytes.size()));
  REQUIRE(gzclose(gz) == Z_OK);
}

Bytes readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string err() { return synpl_rt_last_error(); }

// A small image set: n images of rows x cols with pixel = (i * 31 + p) % 256,
// labels i % classes.
struct SmallSet {
  uint32_t n, rows, cols, classes;
  Bytes pixels, labels;
  SmallSet(uint32_t n, uint32_t rows, uint32_t cols, uint32_t classes)
      : n(n), rows(rows), cols(cols), classes(classes) {
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t p = 0; p < rows * cols; ++p)
        pixels.push_back(uint8_t((i * 31 + p) % 256));
      labels.push_back(uint8_t(i % classes));
    }
  }
  Bytes imagesIdx() const { return idxBytes(0x08, {n, rows, cols}, pixels); }
  Bytes labelsIdx() const { return idxBytes(0x08, {n}, labels); }
};

} // namespace

TEST_CASE("runtime files: read, map, ranged read, errors", "[runtime][file]") {
  TempDir dir;
  Bytes content(100000);
  for (size_t i = 0; i < content.size(); ++i)
    content[i] = uint8_t(i * 7 + 3);
  std::string path = dir.file("blob.bin");
  writeRaw(path, content);

  uint64_t size = 0;
  CHECK(synpl_rt_file_size(path.c_str(), &size) == SYNPL_RT_OK);
  CHECK(size == content.size());

  synpl_rt_buffer buf;
  REQUIRE(synpl_rt_file_read(path.c_str(), &buf) == SYNPL_RT_OK);
  CHECK(buf.size == content.size());
  CHECK((reinterpret_cast<uintptr_t>(buf.data) & 63) == 0);
  CHECK(std::memcmp(buf.data, content.data(), content.size()) == 0);
  synpl_rt_buffer_release(&buf);
  CHECK(buf.data == nullptr);

  REQUIRE(synpl_rt_file_map(path.c_str(), &buf) == SYNPL_RT_OK);
  CHECK(buf.mapped == 1);
  CHECK(buf.size == content.size());
  CHECK(std::memcmp(buf.data, content.data(), content.size()) == 0);
  synpl_rt_buffer_release(&buf);

  // dma_ssd_to_ram into a pool block.
  synpl_rt_region *pool = synpl_rt_region_create_pool(4096, 2);
  REQUIRE(pool);
  void *blk = synpl_rt_region_alloc(pool, 4096);
  REQUIRE(synpl_rt_dma_ssd_to_ram(path.c_str(), 50000, blk, 4096) == SYNPL_RT_OK);
  CHECK(std::memcmp(blk, content.data() + 50000, 4096) == 0);
  CHECK(synpl_rt_dma_ssd_to_ram(path.c_str(), 99000, blk, 4096) ==
        SYNPL_RT_ERR_FORMAT);
  CHECK(err() == path + ": truncated: 4096 bytes wanted at offset 99000, file "
                        "has 100000");
  synpl_rt_region_destroy(pool);

  std::string empty = dir.file("empty");
  writeRaw(empty, {});
  REQUIRE(synpl_rt_file_map(empty.c_str(), &buf) == SYNPL_RT_OK);
  CHECK(buf.size == 0);
  synpl_rt_buffer_release(&buf);
  REQUIRE(synpl_rt_file_read(empty.c_str(), &buf) == SYNPL_RT_OK);
  CHECK(buf.size == 0);
  synpl_rt_buffer_release(&buf);

  std::string missing = dir.file("missing.bin");
  CHECK(synpl_rt_file_read(missing.c_str(), &buf) == SYNPL_RT_ERR_IO);
  CHECK(err() == missing + ": cannot open: No such file or directory");
  CHECK(buf.data == nullptr);
  CHECK(synpl_rt_file_map(missing.c_str(), &buf) == SYNPL_RT_ERR_IO);
  CHECK(synpl_rt_file_read(dir.path.c_str(), &buf) == SYNPL_RT_ERR_IO);
  CHECK(err() == dir.path + ": not a regular file");
  // A FIFO without a writer: an error, not a hang in open().
  std::string fifo = dir.file("fifo");
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(synpl_rt_file_read(fifo.c_str(), &buf) == SYNPL_RT_ERR_IO);
  CHECK(err() == fifo + ": not a regular file");
}

TEST_CASE("runtime idx: raw and gzip'd files decode", "[runtime][idx]") {
  TempDir dir;
  SmallSet set(5, 3, 4, 10);
  for (bool gz : {false, true}) {
    INFO((gz ? "gzip" : "raw"));
    std::string images = dir.file(gz ? "img.gz" : "img");
    std::string labels = dir.file(gz ? "lab.gz" : "lab");
    (gz ? writeGz : writeRaw)(images, set.imagesIdx());
    (gz ? writeGz : writeRaw)(labels, set.labelsIdx());

    synpl_rt_idx idx;
    REQUIRE(synpl_rt_idx_load(images.c_str(), &idx) == SYNPL_RT_OK);
    CHECK(idx.magic == SYNPL_RT_IDX_MAGIC_IMAGES);
    CHECK(idx.type == SYNPL_RT_IDX_U8);
    CHECK(idx.ndims == 3);
    CHECK((idx.dims[0] == 5 && idx.dims[1] == 3 && idx.dims[2] == 4));
    CHECK(idx.elements == 60);
    CHECK(idx.bytes == 60);
    CHECK((reinterpret_cast<uintptr_t>(idx.data) & 63) == 0);
    CHECK(Bytes(idx.data, idx.data + idx.bytes) == set.pixels);
    synpl_rt_idx_free(&idx);

    REQUIRE(synpl_rt_idx_load_expect(labels.c_str(), SYNPL_RT_IDX_MAGIC_LABELS,
                                     &idx) == SYNPL_RT_OK);
    CHECK(idx.ndims == 1);
    CHECK(Bytes(idx.data, idx.data + idx.bytes) == set.labels);
    synpl_rt_idx_free(&idx);
  }

  // The name does not decide: a gzip stream called `.raw` still inflates.
  std::string disguised = dir.file("labels.raw");
  writeGz(disguised, set.labelsIdx());
  synpl_rt_idx idx;
  REQUIRE(synpl_rt_idx_load(disguised.c_str(), &idx) == SYNPL_RT_OK);
  CHECK(idx.elements == 5);
  synpl_rt_idx_free(&idx);

  // Concatenated gzip members form one stream.
  Bytes whole = set.imagesIdx();
  std::string partA = dir.file("a.gz"), partB = dir.file("b.gz");
  writeGz(partA, Bytes(whole.begin(), whole.begin() + 20));
  writeGz(partB, Bytes(whole.begin() + 20, whole.end()));
  Bytes cat = readAll(partA), tail = readAll(partB);
  cat.insert(cat.end(), tail.begin(), tail.end());
  std::string joined = dir.file("joined.gz");
  writeRaw(joined, cat);
  REQUIRE(synpl_rt_idx_load(joined.c_str(), &idx) == SYNPL_RT_OK);
  CHECK(Bytes(idx.data, idx.data + idx.bytes) == set.pixels);
  synpl_rt_idx_free(&idx);
}

TEST_CASE("runtime idx: multi-byte types come back in host order",
          "[runtime][idx]") {
  TempDir dir;
  Bytes payload;
  for (uint32_t v : {1u, 0x01020304u, 0xfffffffeu})
    putBE32(payload, v);
  std::string path = dir.file("i32.idx");
  writeRaw(path, idxBytes(0x0C, {3}, payload));
  synpl_rt_idx idx;
  REQUIRE(synpl_rt_idx_load(path.c_str(), &idx) == SYNPL_RT_OK);
  CHECK(idx.type == SYNPL_RT_IDX_I32);
  CHECK(idx.bytes == 12);
  int32_t values[3];
  std::memcpy(values, idx.data, 12);
  CHECK(values[0] == 1);
  CHECK(values[1] == 0x01020304);
  CHECK(values[2] == -2);
  synpl_rt_idx_free(&idx);

  Bytes f;
  putBE32(f, 0x3fc00000u); // 1.5f
  putBE32(f, 0xc0200000u); // -2.5f
  writeRaw(path, idxBytes(0x0D, {1, 2}, f));
  REQUIRE(synpl_rt_idx_load(path.c_str(), &idx) == SYNPL_RT_OK);
  float fv[2];
  std::memcpy(fv, idx.data, 8);
  CHECK(fv[0] == 1.5f);
  CHECK(fv[1] == -2.5f);
  synpl_rt_idx_free(&idx);
}

TEST_CASE("runtime idx: every bad input is a message, not a crash",
          "[runtime][idx]") {
  TempDir dir;
  SmallSet set(5, 3, 4, 10);
  synpl_rt_idx idx;

  std::string missing = dir.file("train-images-idx3-ubyte.gz");
  CHECK(synpl_rt_idx_load(missing.c_str(), &idx) == SYNPL_RT_ERR_IO);
  CHECK(err() == missing + ": cannot open: No such file or directory");
  CHECK(idx.data == nullptr);

  std::string labels = dir.file("labels.gz");
  writeGz(labels, set.labelsIdx());
  CHECK(synpl_rt_idx_load_expect(labels.c_str(), SYNPL_RT_IDX_MAGIC_IMAGES,
                                 &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err() == labels + ": bad IDX magic 0x00000801, expected 0x00000803 (u8 "
                          "images [n, rows, cols])");

  std::string junk = dir.file("junk");
  writeRaw(junk, {'P', 'K', 3, 4, 0, 0, 0, 0});
  CHECK(synpl_rt_idx_load(junk.c_str(), &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err() == junk + ": bad IDX magic 0x504b0304 (want 0x0000TTNN: type "
                        "08/09/0B/0C/0D/0E, 1 to 8 dimensions)");
  writeRaw(junk, idxBytes(0x07, {2}, {1, 2}));
  CHECK(synpl_rt_idx_load(junk.c_str(), &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err().find("bad IDX magic 0x00000701") != std::string::npos);

  std::string tiny = dir.file("tiny");
  writeRaw(tiny, {0, 0});
  CHECK(synpl_rt_idx_load(tiny.c_str(), &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err() == tiny + ": truncated IDX header (2 bytes, need at least 4)");
  writeRaw(tiny, {0, 0, 8, 3, 0, 0, 0, 5});
  CHECK(synpl_rt_idx_load(tiny.c_str(), &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err() == tiny + ": truncated IDX header (8 bytes, 3 dimensions need 16)");

  // Raw data shorter than the header declares; and longer.
  Bytes images = set.imagesIdx();
  std::string shortRaw = dir.file("short-images");
  writeRaw(shortRaw, Bytes(images.begin(), images.end() - 7));
  CHECK(synpl_rt_idx_load(shortRaw.c_str(), &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err() == shortRaw + ": truncated IDX data: header declares 60 bytes (60 "
                            "u8 elements), file has 53");
  Bytes longer = images;
  longer.push_back(0);
  writeRaw(shortRaw, longer);
  CHECK(synpl_rt_idx_load(shortRaw.c_str(), &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err() == shortRaw + ": 1 trailing bytes after the IDX data (header "
                            "declares 60 bytes)");

  // A gzip stream cut short; a gzip stream with a flipped byte.
  std::string gz = dir.file("images.gz");
  writeGz(gz, images);
  Bytes packed = readAll(gz);
  std::string cut = dir.file("cut.gz");
  writeRaw(cut, Bytes(packed.begin(), packed.end() - 12));
  CHECK(synpl_rt_idx_load(cut.c_str(), &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err().find(cut + ": truncated gzip stream (unexpected end of file") == 0);
  Bytes flipped = packed;
  flipped[flipped.size() - 6] ^= 0xff; // inside the CRC-32 trailer
  std::string bad = dir.file("bad.gz");
  writeRaw(bad, flipped);
  CHECK(synpl_rt_idx_load(bad.c_str(), &idx) == SYNPL_RT_ERR_FORMAT);
  CHECK(err() == bad + ": corrupt gzip stream: incorrect data check");
  CHECK(idx.data == nullptr);
}

TEST_CASE("runtime idx: every truncation and every gzip byte flip is caught",
          "[runtime][idx]") {
  TempDir dir;
  SmallSet set(7, 5, 3, 10);
  Bytes raw = set.imagesIdx();
  std::string gzPath = dir.file("images.gz");
  writeGz(gzPath, raw);
  Bytes packed = readAll(gzPath);
  std::string path = dir.file("cut");
  synpl_rt_idx idx;
  int64_t accepted = 0, unnamed = 0;
  for (const Bytes *whole : {&raw, &packed})
    for (size_t len = 0; len < whole->size(); ++len) {
      writeRaw(path, Bytes(whole->begin(), whole->begin() + len));
      synpl_rt_clear_error();
      int32_t st = synpl_rt_idx_load(path.c_str(), &idx);
      accepted += st == SYNPL_RT_OK;
      unnamed += err().rfind(path + ": ", 0) != 0;
      synpl_rt_idx_free(&idx);
    }
  CHECK(accepted == 0);
  CHECK(unnamed == 0);

  // A flipped bit anywhere in the gzip file: an error naming the file, or
  // (in a field inflate ignores, e.g. the timestamp) the exact data.
  int64_t wrongData = 0, errors = 0;
  for (size_t pos = 0; pos < packed.size(); ++pos) {
    Bytes flipped = packed;
    flipped[pos] ^= 0x10;
    writeRaw(path, flipped);
    int32_t st = synpl_rt_idx_load(path.c_str(), &idx);
    if (st == SYNPL_RT_OK) {
      wrongData += Bytes(idx.data, idx.data + idx.bytes) != set.pixels;
    } else {
      ++errors;
      unnamed += err().rfind(path + ": ", 0) != 0;
    }
    synpl_rt_idx_free(&idx);
  }
  CHECK(wrongData == 0);
  CHECK(unnamed == 0);
  CHECK(errors > int64_t(packed.size()) / 2);
}

TEST_CASE("runtime dataset: counts and label range are checked",
          "[runtime][dataset]") {
  TempDir dir;
  SmallSet set(6, 2, 2, 10);
  std::string images = dir.file("train-images-idx3-ubyte.gz");
  std::string labels = dir.file("train-labels-idx1-ubyte.gz");
  writeGz(images, set.imagesIdx());
  synpl_rt_dataset *ds = nullptr;

  // Label 12 at index 5.
  Bytes badLabels = set.labels;
  badLabels[5] = 12;
  writeGz(labels, idxBytes(0x08, {6}, badLabels));
  CHECK(synpl_rt_dataset_open_idx(images.c_str(), labels.c_str(), 10, &ds) ==
        SYNPL_RT_ERR_FORMAT);
  CHECK(err() == labels + ": label 12 at index 5 is out of range [0, 10)");
  CHECK(ds == nullptr);

  // 5 labels for 6 images.
  writeGz(labels, idxBytes(0x08, {5}, Bytes(set.labels.begin(), set.labels.end() - 1)));
  CHECK(synpl_rt_dataset_open_idx(images.c_str(), labels.c_str(), 10, &ds) ==
        SYNPL_RT_ERR_FORMAT);
  CHECK(err() == labels + ": 5 labels, but " + images + " has 6 images");

  // The two files swapped.
  writeGz(labels, set.labelsIdx());
  CHECK(synpl_rt_dataset_open_idx(labels.c_str(), images.c_str(), 10, &ds) ==
        SYNPL_RT_ERR_FORMAT);
  CHECK(err().find(labels + ": bad IDX magic 0x00000801, expected 0x00000803") == 0);

  CHECK(synpl_rt_dataset_open_idx(images.c_str(), labels.c_str(), 0, &ds) ==
        SYNPL_RT_ERR_INVALID);
  CHECK(synpl_rt_dataset_open_idx(images.c_str(), labels.c_str(), 5, &ds) ==
        SYNPL_RT_ERR_FORMAT); // labels go up to 5
  CHECK(err() == labels + ": label 5 at index 5 is out of range [0, 5)");

  REQUIRE(synpl_rt_dataset_open_idx(images.c_str(), labels.c_str(), 10, &ds) ==
          SYNPL_RT_OK);
  CHECK(synpl_rt_dataset_size(ds) == 6);
  CHECK(synpl_rt_dataset_rows(ds) == 2);
  CHECK(synpl_rt_dataset_cols(ds) == 2);
  CHECK(synpl_rt_dataset_num_classes(ds) == 10);
  CHECK(Bytes(synpl_rt_dataset_labels(ds), synpl_rt_dataset_labels(ds) + 6) ==
        set.labels);
  synpl_rt_dataset_destroy(ds);
}

TEST_CASE("runtime dataset: epoch shuffling is a fixed, seeded permutation",
          "[runtime][dataset]") {
  // Golden orders from an independent implementation of the documented
  // algorithm (Python: splitmix64 -> xoshiro256**, Lemire, Fisher-Yates).
  std::vector<uint32_t> p(10);
  REQUIRE(synpl_rt_epoch_permutation(42, 0, 10, p.data()) == SYNPL_RT_OK);
  CHECK(p == std::vector<uint32_t>{9, 4, 5, 3, 1, 0, 2, 8, 6, 7});
  REQUIRE(synpl_rt_epoch_permutation(42, 1, 10, p.data()) == SYNPL_RT_OK);
  CHECK(p == std::vector<uint32_t>{1, 0, 8, 3, 7, 4, 5, 9, 2, 6});
  std::vector<uint32_t> q(20);
  REQUIRE(synpl_rt_epoch_permutation(12345, 7, 20, q.data()) == SYNPL_RT_OK);
  CHECK(q == std::vector<uint32_t>{14, 6, 11, 3, 19, 1, 0, 2, 15, 13, 18, 12,
                                   7, 17, 10, 9, 4, 5, 8, 16});

  // Every epoch a permutation; same (seed, epoch) same order; epochs differ.
  constexpr uint32_t n = 60000;
  std::vector<uint32_t> a(n), b(n), prev(n);
  for (uint64_t epoch = 0; epoch < 4; ++epoch) {
    INFO("epoch " << epoch);
    REQUIRE(synpl_rt_epoch_permutation(7, epoch, n, a.data()) == SYNPL_RT_OK);
    REQUIRE(synpl_rt_epoch_permutation(7, epoch, n, b.data()) == SYNPL_RT_OK);
    CHECK(a == b);
    std::vector<uint32_t> sorted = a;
    std::sort(sorted.begin(), sorted.end());
    std::vector<uint32_t> iota(n);
    std::iota(iota.begin(), iota.end(), 0u);
    CHECK(sorted == iota);
    CHECK(a != iota);
    if (epoch > 0)
      CHECK(a != prev);
    prev = a;
  }
  REQUIRE(synpl_rt_epoch_permutation(8, 0, n, b.data()) == SYNPL_RT_OK);
  REQUIRE(synpl_rt_epoch_permutation(7, 0, n, a.data()) == SYNPL_RT_OK);
  CHECK(a != b); // another seed
  CHECK(synpl_rt_epoch_permutation(1, 0, 0, nullptr) == SYNPL_RT_OK);
  uint32_t one = 5;
  CHECK(synpl_rt_epoch_permutation(1, 0, 1, &one) == SYNPL_RT_OK);
  CHECK(one == 0);

  // Fisher-Yates with an unbiased draw: each of the 6 orders of 3 items
  // shows up about 1/6 of the time over many seeds.
  std::vector<int> counts(6, 0);
  for (uint64_t seed = 0; seed < 60000; ++seed) {
    uint32_t t[3];
    synpl_rt_epoch_permutation(seed, 0, 3, t);
    counts[t[0] * 2 + (t[1] > t[2])]++;
  }
  for (int c : counts)
    CHECK(std::abs(c - 10000) < 500); // ~5 sigma
}

TEST_CASE("runtime dataset: batching, f32 and u8, drop_last",
          "[runtime][dataset]") {
  TempDir dir;
  SmallSet set(10, 2, 3, 4);
  std::string images = dir.file("img"), labels = dir.file("lab");
  writeRaw(images, set.imagesIdx());
  writeRaw(labels, set.labelsIdx());
  synpl_rt_dataset *ds = nullptr;
  REQUIRE(synpl_rt_dataset_open_idx(images.c_str(), labels.c_str(), 4, &ds) ==
          SYNPL_RT_OK);
  constexpr uint32_t pix = 6, batch = 4;
  CHECK(synpl_rt_dataset_num_batches(ds, batch, 1) == 2);
  CHECK(synpl_rt_dataset_num_batches(ds, batch, 0) == 3);
  CHECK(synpl_rt_dataset_num_batches(ds, 10, 1) == 1);
  CHECK(synpl_rt_dataset_num_batches(ds, 11, 1) == 0);

  std::vector<float> f(batch * pix);
  std::vector<uint8_t> u(batch * pix);
  std::vector<int32_t> lab(batch), lab2(batch);
  uint32_t count = 0;

  // File order: batch 1 holds samples 4..7.
  REQUIRE(synpl_rt_dataset_set_epoch(ds, 0, 0, 0) == SYNPL_RT_OK);
  REQUIRE(synpl_rt_dataset_batch_f32(ds, 1, batch, 1, f.data(), lab.data(),
                                     &count) == SYNPL_RT_OK);
  CHECK(count == batch);
  bool pixelsOk = true;
  for (uint32_t r = 0; r < batch; ++r)
    for (uint32_t p = 0; p < pix; ++p)
      pixelsOk &= f[r * pix + p] == float(set.pixels[(4 + r) * pix + p]) / 255.0f;
  CHECK(pixelsOk);
  CHECK(lab == std::vector<int32_t>{0, 1, 2, 3});

  // Shuffled: batch rows follow the epoch's order; u8 and f32 agree.
  REQUIRE(synpl_rt_dataset_set_epoch(ds, 99, 3, 1) == SYNPL_RT_OK);
  std::vector<uint32_t> perm(10);
  synpl_rt_epoch_permutation(99, 3, 10, perm.data());
  CHECK(std::vector<uint32_t>(synpl_rt_dataset_order(ds),
                              synpl_rt_dataset_order(ds) + 10) == perm);
  std::multiset<uint32_t> seenLabels;
  for (uint64_t bi = 0; bi < 2; ++bi) {
    REQUIRE(synpl_rt_dataset_batch_u8(ds, bi, batch, 1, u.data(), lab.data(),
                                      &count) == SYNPL_RT_OK);
    REQUIRE(synpl_rt_dataset_batch_f32(ds, bi, batch, 1, f.data(), lab2.data(),
                                       nullptr) == SYNPL_RT_OK);
    CHECK(lab == lab2);
    bool ok = true;
    for (uint32_t r = 0; r < batch; ++r) {
      uint32_t sample = perm[bi * batch + r];
      ok &= lab[r] == int32_t(set.labels[sample]);
      for (uint32_t p = 0; p < pix; ++p) {
        ok &= u[r * pix + p] == set.pixels[sample * pix + p];
        ok &= f[r * pix + p] == float(u[r * pix + p]) / 255.0f;
      }
    }
    CHECK(ok);
  }

  // drop_last: batch 2 does not exist; without it, 2 real rows + padding.
  CHECK(synpl_rt_dataset_batch_f32(ds, 2, batch, 1, f.data(), lab.data(),
                                   &count) == SYNPL_RT_ERR_INVALID);
  CHECK(err() == "dataset batch: batch 2 is out of range [0, 2) (10 samples, "
                 "batch size 4, drop_last)");
  std::fill(f.begin(), f.end(), 7.0f);
  REQUIRE(synpl_rt_dataset_batch_f32(ds, 2, batch, 0, f.data(), lab.data(),
                                     &count) == SYNPL_RT_OK);
  CHECK(count == 2);
  CHECK(lab[0] == int32_t(set.labels[perm[8]]));
  CHECK(lab[1] == int32_t(set.labels[perm[9]]));
  CHECK(lab[2] == -1);
  CHECK(lab[3] == -1);
  bool padded = true;
  for (uint32_t i = 2 * pix; i < batch * pix; ++i)
    padded &= f[i] == 0.0f;
  CHECK(padded);
  CHECK(f[0] == float(set.pixels[perm[8] * pix]) / 255.0f);
  CHECK(synpl_rt_dataset_batch_u8(ds, 0, 0, 0, u.data(), lab.data(), &count) ==
        SYNPL_RT_ERR_INVALID);
  synpl_rt_dataset_destroy(ds);
}

TEST_CASE("runtime dataset: Debian's Fashion-MNIST decodes",
          "[runtime][dataset][fashion-mnist]") {
  const std::string root = "/usr/share/datasets/fashion-mnist/";
  struct stat st;
  if (stat((root + "train-images-idx3-ubyte.gz").c_str(), &st) != 0) {
    WARN("skipped: " << root << " is absent (Debian package dataset-fashion-mnist)");
    return;
  }
  struct Split {
    const char *name;
    uint32_t n;
  };
  for (Split split : {Split{"train", 60000}, Split{"t10k", 10000}}) {
    INFO(split.name);
    std::string images = root + split.name + "-images-idx3-ubyte.gz";
    std::string labels = root + split.name + "-labels-idx1-ubyte.gz";
    synpl_rt_dataset *ds = nullptr;
    REQUIRE(synpl_rt_dataset_open_idx(images.c_str(), labels.c_str(), 10, &ds) ==
            SYNPL_RT_OK);
    CHECK(synpl_rt_dataset_size(ds) == split.n);
    CHECK(synpl_rt_dataset_rows(ds) == 28);
    CHECK(synpl_rt_dataset_cols(ds) == 28);
    // Fashion-MNIST is balanced: n / 10 of every class.
    std::vector<uint32_t> perClass(10, 0);
    const uint8_t *lab = synpl_rt_dataset_labels(ds);
    for (uint32_t i = 0; i < split.n; ++i)
      perClass[lab[i]]++;
    CHECK(perClass == std::vector<uint32_t>(10, split.n / 10));
    // Pixels are not all zero (a decode that dropped data would be).
    const uint8_t *img = synpl_rt_dataset_images(ds);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < uint64_t(split.n) * 784; ++i)
      sum += img[i];
    CHECK(sum > uint64_t(split.n) * 784 * 20);
    synpl_rt_dataset_destroy(ds);
  }
}

TEST_CASE("runtime idx: a gzip'd file is decoded once, then mapped from the data cache",
          "[runtime][idx][cache]") {
  TempDir dir;
  std::string cache = dir.file("cache");
  const char *saved = std::getenv("SYNPL_CACHE_DIR");
  std::string savedValue = saved ? saved : "";
  setenv("SYNPL_CACHE_DIR", cache.c_str(), 1);
  unsetenv("SYNPL_DATA_CACHE");
  auto entries = [&] {
    std::string cmd = "ls '" + cache + "/data' 2>/dev/null | grep -c '\\.idx$' > '" +
                      dir.file("count") + "'";
    (void)std::system(cmd.c_str());
    Bytes n = readAll(dir.file("count"));
    return std::atoi(std::string(n.begin(), n.end()).c_str());
  };

  // 1400 images of 28x28: 1.1 MB decoded, above the cache's 1 MiB floor.
  SmallSet set(1400, 28, 28, 10);
  std::string images = dir.file("img.gz");
  writeGz(images, set.imagesIdx());
  synpl_rt_idx idx;
  REQUIRE(synpl_rt_idx_load(images.c_str(), &idx) == SYNPL_RT_OK);
  CHECK(idx.mapped == 0);
  synpl_rt_idx_free(&idx);
  CHECK(entries() == 1);

  // The second load maps the entry: same header, same bytes, aligned.
  REQUIRE(synpl_rt_idx_load_expect(images.c_str(), SYNPL_RT_IDX_MAGIC_IMAGES, &idx) ==
          SYNPL_RT_OK);
  CHECK(idx.mapped == 1);
  CHECK((idx.ndims == 3 && idx.dims[0] == 1400 && idx.dims[1] == 28 && idx.dims[2] == 28));
  CHECK(idx.magic == SYNPL_RT_IDX_MAGIC_IMAGES);
  CHECK((reinterpret_cast<uintptr_t>(idx.data) & 63) == 0);
  CHECK(Bytes(idx.data, idx.data + idx.bytes) == set.pixels);
  synpl_rt_idx_free(&idx);
  // An entry is never taken for another magic: the file's own error stands.
  CHECK(synpl_rt_idx_load_expect(images.c_str(), SYNPL_RT_IDX_MAGIC_LABELS, &idx) ==
        SYNPL_RT_ERR_FORMAT);

  // The file rewritten (same name, same size, other pixels): the old entry
  // no longer matches; the new contents are read, and kept.
  SmallSet other(1400, 28, 28, 10);
  for (uint8_t &p : other.pixels)
    p = uint8_t(255 - p);
  writeGz(images, other.imagesIdx());
  REQUIRE(synpl_rt_idx_load(images.c_str(), &idx) == SYNPL_RT_OK);
  CHECK(idx.mapped == 0);
  CHECK(Bytes(idx.data, idx.data + idx.bytes) == other.pixels);
  synpl_rt_idx_free(&idx);
  CHECK(entries() == 2);

  // A damaged entry (cut short) is ignored: the file is decoded again.
  std::string cmd = "for f in '" + cache + "'/data/*.idx; do truncate -s 5000 \"$f\"; done";
  REQUIRE(std::system(cmd.c_str()) == 0);
  REQUIRE(synpl_rt_idx_load(images.c_str(), &idx) == SYNPL_RT_OK);
  CHECK(idx.mapped == 0);
  CHECK(Bytes(idx.data, idx.data + idx.bytes) == other.pixels);
  synpl_rt_idx_free(&idx);

  // SYNPL_DATA_CACHE=0: neither read nor written.
  setenv("SYNPL_DATA_CACHE", "0", 1);
  REQUIRE(synpl_rt_idx_load(images.c_str(), &idx) == SYNPL_RT_OK);
  CHECK(idx.mapped == 0);
  synpl_rt_idx_free(&idx);
  unsetenv("SYNPL_DATA_CACHE");

  // Small files are not kept.
  SmallSet small(5, 3, 4, 10);
  std::string few = dir.file("few.gz");
  writeGz(few, small.imagesIdx());
  int before = entries();
  REQUIRE(synpl_rt_idx_load(few.c_str(), &idx) == SYNPL_RT_OK);
  synpl_rt_idx_free(&idx);
  CHECK(entries() == before);

  if (saved)
    setenv("SYNPL_CACHE_DIR", savedValue.c_str(), 1);
  else
    unsetenv("SYNPL_CACHE_DIR");
}
