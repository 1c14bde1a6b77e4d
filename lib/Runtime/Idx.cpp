//===- Idx.cpp - IDX decoder (MNIST-style data sets), gzip'd or raw --------===//
//
// A host-side init op of the spec's Data Ingestion path: storage -> decode
// (CPU) -> host memory. The file is read whole (pread loop); a gzip stream
// (recognised by its magic bytes 1f 8b, whatever the file is called) is
// inflated in memory, member after member, so truncation and CRC errors come
// back as messages instead of short data. The header is then checked against
// the payload size exactly: short data and trailing bytes are both errors.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include <cstring>
#include <zlib.h>

using namespace synpl::rt;

namespace {

uint32_t elementSize(uint32_t type) {
  switch (type) {
  case SYNPL_RT_IDX_U8:
  case SYNPL_RT_IDX_I8:
    return 1;
  case SYNPL_RT_IDX_I16:
    return 2;
  case SYNPL_RT_IDX_I32:
  case SYNPL_RT_IDX_F32:
    return 4;
  case SYNPL_RT_IDX_F64:
    return 8;
  default:
    return 0;
  }
}

uint32_t readBE32(const uint8_t *p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) |
         (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}

/// A growable 64-byte aligned byte buffer without exceptions.
struct Bytes {
  uint8_t *data = nullptr;
  uint64_t size = 0, cap = 0;
  ~Bytes() { alignedFree(data); }
  bool reserve(uint64_t want) {
    if (want <= cap)
      return true;
    uint64_t newCap = cap ? cap : 4096;
    while (newCap < want)
      newCap *= 2;
    auto *p = static_cast<uint8_t *>(alignedAlloc(newCap));
    if (!p)
      return false;
    if (size)
      std::memcpy(p, data, size);
    alignedFree(data);
    data = p;
    cap = newCap;
    return true;
  }
  uint8_t *release() {
    uint8_t *p = data;
    data = nullptr;
    size = cap = 0;
    return p;
  }
};

/// Inflates every gzip member of `in` into `out`.
int32_t gunzip(const char *path, const uint8_t *in, uint64_t inSize, Bytes &out) {
  // The trailer's ISIZE (size mod 2^32 of the last member) is a good first
  // guess for one-member files such as the MNIST sets.
  uint64_t guess = 0;
  if (inSize >= 18) {
    const uint8_t *t = in + inSize - 4; // ISIZE is little-endian
    guess = uint64_t(t[0]) | uint64_t(t[1]) << 8 | uint64_t(t[2]) << 16 |
            uint64_t(t[3]) << 24;
  }
  // Deflate expands at most ~1032:1; a larger claim is a corrupt trailer.
  if (guess / 1032 > inSize)
    guess = 0;
  if (!out.reserve(guess + 64 > inSize ? guess + 64 : inSize * 2))
    return fail(SYNPL_RT_ERR_NOMEM, "%s: out of memory while decompressing", path);

  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, 15 + 16) != Z_OK)
    return fail(SYNPL_RT_ERR_NOMEM, "%s: cannot initialise zlib", path);
  uint64_t consumed = 0;
  int32_t status = SYNPL_RT_OK;
  for (;;) {
    // zlib counts in uInt: feed and drain in pieces below 1 GiB.
    uint64_t inLeft = inSize - consumed;
    zs.next_in = const_cast<Bytef *>(in + consumed);
    zs.avail_in = uInt(inLeft < (1u << 30) ? inLeft : (1u << 30));
    if (out.cap - out.size < 4096 && !out.reserve(out.size + 4096)) {
      status = fail(SYNPL_RT_ERR_NOMEM, "%s: out of memory while decompressing", path);
      break;
    }
    uint64_t outLeft = out.cap - out.size;
    zs.next_out = out.data + out.size;
    zs.avail_out = uInt(outLeft < (1u << 30) ? outLeft : (1u << 30));
    uInt availIn = zs.avail_in, availOut = zs.avail_out;
    int rc = inflate(&zs, Z_NO_FLUSH);
    consumed += availIn - zs.avail_in;
    out.size += availOut - zs.avail_out;
    if (rc == Z_STREAM_END) {
      // Another member may follow (concatenated gzip, as gzip(1) accepts).
      while (consumed < inSize && in[consumed] == 0)
        ++consumed; // trailing zero padding, as gzip(1) tolerates
      if (consumed == inSize)
        break;
      if (inflateReset(&zs) != Z_OK) {
        status = fail(SYNPL_RT_ERR_FORMAT, "%s: corrupt gzip stream", path);
        break;
      }
      continue;
    }
    if (rc == Z_OK)
      continue;
    if (rc == Z_BUF_ERROR) {
      if (consumed == inSize) {
        status = fail(SYNPL_RT_ERR_FORMAT,
                      "%s: truncated gzip stream (unexpected end of file after "
                      "%llu compressed bytes)",
                      path, (unsigned long long)inSize);
        break;
      }
      continue; // needs more output space: the reserve above grows it
    }
    status = fail(SYNPL_RT_ERR_FORMAT, "%s: corrupt gzip stream: %s", path,
                  zs.msg ? zs.msg : "inflate failed");
    break;
  }
  inflateEnd(&zs);
  return status;
}

const char *typeName(uint32_t type) {
  switch (type) {
  case SYNPL_RT_IDX_U8:
    return "u8";
  case SYNPL_RT_IDX_I8:
    return "i8";
  case SYNPL_RT_IDX_I16:
    return "i16";
  case SYNPL_RT_IDX_I32:
    return "i32";
  case SYNPL_RT_IDX_F32:
    return "f32";
  case SYNPL_RT_IDX_F64:
    return "f64";
  default:
    return "?";
  }
}

/// Parses the decompressed bytes; takes the data in place (moved to offset 0).
int32_t decode(const char *path, Bytes &raw, uint32_t expectedMagic,
               synpl_rt_idx *out) {
  if (raw.size < 4)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: truncated IDX header (%llu bytes, need at least 4)", path,
                (unsigned long long)raw.size);
  uint32_t magic = readBE32(raw.data);
  uint32_t type = (magic >> 8) & 0xff, ndims = magic & 0xff;
  if (expectedMagic && magic != expectedMagic)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: bad IDX magic 0x%08x, expected 0x%08x (%s)", path, magic,
                expectedMagic,
                expectedMagic == SYNPL_RT_IDX_MAGIC_IMAGES ? "u8 images [n, rows, cols]"
                : expectedMagic == SYNPL_RT_IDX_MAGIC_LABELS ? "u8 labels [n]"
                                                             : "requested");
  if ((magic >> 16) != 0 || elementSize(type) == 0 || ndims == 0 ||
      ndims > SYNPL_RT_IDX_MAX_DIMS)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: bad IDX magic 0x%08x (want 0x0000TTNN: type 08/09/0B/0C/0D/0E, "
                "1 to %d dimensions)",
                path, magic, SYNPL_RT_IDX_MAX_DIMS);
  uint64_t headerBytes = 4 + 4 * uint64_t(ndims);
  if (raw.size < headerBytes)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: truncated IDX header (%llu bytes, %u dimensions need %llu)",
                path, (unsigned long long)raw.size, ndims,
                (unsigned long long)headerBytes);
  uint32_t esize = elementSize(type);
  uint64_t elements = 1;
  for (uint32_t d = 0; d < ndims; ++d) {
    uint32_t dim = readBE32(raw.data + 4 + 4 * d);
    out->dims[d] = dim;
    if (dim != 0 && elements > (uint64_t(1) << 48) / dim)
      return fail(SYNPL_RT_ERR_FORMAT, "%s: IDX dimensions are too large", path);
    elements *= dim;
  }
  uint64_t dataBytes = elements * esize;
  uint64_t have = raw.size - headerBytes;
  if (have < dataBytes)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: truncated IDX data: header declares %llu bytes (%llu %s "
                "elements), file has %llu",
                path, (unsigned long long)dataBytes, (unsigned long long)elements,
                typeName(type), (unsigned long long)have);
  if (have > dataBytes)
    return fail(SYNPL_RT_ERR_FORMAT,
                "%s: %llu trailing bytes after the IDX data (header declares "
                "%llu bytes)",
                path, (unsigned long long)(have - dataBytes),
                (unsigned long long)dataBytes);
  std::memmove(raw.data, raw.data + headerBytes, dataBytes);
  // Big-endian on disk: swap multi-byte elements into host order.
  if (esize > 1 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__) {
    uint8_t *p = raw.data;
    for (uint64_t i = 0; i < elements; ++i, p += esize)
      for (uint32_t a = 0, b = esize - 1; a < b; ++a, --b) {
        uint8_t t = p[a];
        p[a] = p[b];
        p[b] = t;
      }
  }
  out->magic = magic;
  out->type = type;
  out->ndims = ndims;
  out->elements = elements;
  out->bytes = dataBytes;
  out->data = raw.release();
  return SYNPL_RT_OK;
}

} // namespace

extern "C" {

int32_t synpl_rt_idx_load_expect(const char *path, uint32_t expected_magic,
                                 synpl_rt_idx *out) {
  if (!out)
    return fail(SYNPL_RT_ERR_INVALID, "idx load: null output");
  std::memset(out, 0, sizeof(*out));
  // Decoded by an earlier run? (DataCache.cpp: gzip'd files only.)
  DataCacheSource cache(path);
  if (cache.load(expected_magic, out))
    return SYNPL_RT_OK;
  synpl_rt_buffer file;
  if (int32_t st = synpl_rt_file_read(path, &file))
    return st;
  bool gzipped = file.size >= 2 && file.data[0] == 0x1f && file.data[1] == 0x8b;
  Bytes raw;
  int32_t st = SYNPL_RT_OK;
  if (gzipped) {
    st = gunzip(path, file.data, file.size, raw);
    synpl_rt_buffer_release(&file);
  } else {
    // Raw IDX: take the read buffer as is.
    raw.data = file.data;
    raw.size = raw.cap = file.size;
    file.data = nullptr;
  }
  if (st == SYNPL_RT_OK)
    st = decode(path, raw, expected_magic, out);
  if (st != SYNPL_RT_OK)
    std::memset(out, 0, sizeof(*out));
  else if (gzipped)
    cache.store(*out);
  return st;
}

int32_t synpl_rt_idx_load(const char *path, synpl_rt_idx *out) {
  return synpl_rt_idx_load_expect(path, 0, out);
}

void synpl_rt_idx_free(synpl_rt_idx *idx) {
  if (!idx)
    return;
  if (idx->mapped)
    dataCacheRelease(idx);
  else
    alignedFree(idx->data);
  std::memset(idx, 0, sizeof(*idx));
}

} // extern "C"
