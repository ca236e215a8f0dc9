// cuzk.h: proving keys (.zkey read into memory the key owns) and their optional .r1cs.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "abi/abi_util.hpp"
#include "abi/handles.hpp"
#include "engine/key_memory.hpp"
#include "prover/key_check.hpp"
#include "prover/vk.hpp"
#include "prover/witness_check.hpp"
#include "util/clock.hpp"

using cuzk::abi::guarded;
using cuzk::abi::still_used;
namespace formats = cuzk::formats;

namespace {

constexpr uint32_t kKeyFlags = CUZK_KEY_SKIP_POINT_CHECKS | CUZK_KEY_POINTS_ON_DEMAND;

// A key whose point sections stay in its file: the points are checked as they are read, in
// chunks of at most 2^20 (the same check and messages as check_key_points).
cuzk_status check_points_in_file(const formats::ZkeyGroth16& z, std::string& msg) {
  constexpr uint64_t kChunk = 1u << 20;
  std::vector<uint8_t> chunk;
  for (int i = 0; i < formats::kPointSections; i++) {
    const auto s = (formats::PointSection)i;
    const std::string name = std::string(cuzk::engine::section_name(s)) + " (section " +
                             std::to_string(formats::kFirstPointSectionId + i) + ")";
    const uint64_t count = z.point_count(s), pb = z.point_bytes(s);
    for (uint64_t first = 0; first < count; first += kChunk) {
      const uint64_t n = std::min(kChunk, count - first);
      chunk.resize(n * pb);
      cuzk_status st = cuzk::engine::read_points(z, s, first, n, chunk.data(), msg);
      if (st == CUZK_OK) {
        st = cuzk::prover::check_section_points(z.curve, name.c_str(), chunk.data(), n, s == formats::kSecB2, first,
                                                cuzk::default_thread_pool(), msg);
      }
      if (st != CUZK_OK) return st;
    }
  }
  return CUZK_OK;
}

}  // namespace

cuzk_status cuzk::abi::finish_key_open(std::unique_ptr<cuzk_key> key, uint32_t flags, uint64_t start, cuzk_key** out,
                                       std::string& msg) {
  cuzk_status st = formats::parse_zkey(key->file.data(), key->file.size(), key->zkey, msg);
  if (st != CUZK_OK) return st;
  if (flags & CUZK_KEY_POINTS_ON_DEMAND) key->points = std::make_unique<formats::FilePoints>(key->file, key->zkey);
  if (key->points) {  // the pointers would read untouched memory: zeros
    auto& z = key->zkey;
    z.points_a = z.points_b1 = z.points_b2 = z.points_c = z.points_h = nullptr;
    z.source = key->points.get();
  }
  if (!(flags & CUZK_KEY_SKIP_POINT_CHECKS)) {
    st = cuzk::prover::check_key_points(key->zkey, cuzk::default_thread_pool(), msg);
    if (st == CUZK_OK && key->zkey.source) st = check_points_in_file(key->zkey, msg);
    if (st != CUZK_OK) return st;
  }
  key->open_ns = cuzk::now_ns() - start;
  *out = key.release();
  return CUZK_OK;
}

namespace {

static_assert(sizeof(cuzk_witness_check) == 32 && offsetof(cuzk_witness_check, values) == 8 &&
                  offsetof(cuzk_witness_check, first_bad_index) == 16 &&
                  offsetof(cuzk_witness_check, values_offset) == 24,
              "cuzk_witness_check layout");

// cuzk_key_check_witness's own argument checks in front of the one witness check (shared with
// cuzk_prove; scan: every value < r too); `facts` says what it found.
cuzk_status check_key_witness(const cuzk_key* key, const uint8_t* witness, size_t witness_len, uint32_t witness_format,
                              bool scan, cuzk::prover::WitnessFacts& facts, std::string& msg) {
  if (!key) { msg = "key must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
  if (witness_len == 0) {  // (an empty buffer reaches C as NULL from every FFI)
    msg = "the witness is empty (0 bytes): give a .wtns file or the witness's raw values";
    return CUZK_ERR_WITNESS_LENGTH;
  }
  if (!witness) { msg = "witness must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
  const uint8_t* values = nullptr;
  return scan ? cuzk::prover::check_witness(key->zkey, witness, witness_len, witness_format, cuzk::default_thread_pool(),
                                            &values, msg, &facts)
              : cuzk::prover::check_witness_shape(key->zkey, witness, witness_len, witness_format, &values, msg, &facts);
}
}  // namespace

extern "C" {

CUZK_API cuzk_status cuzk_key_open(const char* path, uint32_t flags, cuzk_key** out, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!path || !out) { msg = "path and out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    *out = nullptr;
    if (flags & ~kKeyFlags) { msg = "unknown flags"; return CUZK_ERR_INVALID_ARGUMENT; }
    uint64_t start = cuzk::now_ns();
    auto key = std::make_unique<cuzk_key>();
    const uint32_t first = formats::kFirstPointSectionId;  // sections 5..9: the points
    cuzk_status st = (flags & CUZK_KEY_POINTS_ON_DEMAND)
                         ? formats::FileBytes::read_sections(path, formats::kZkeyContainer, {first, first + 1, first + 2, first + 3, first + 4},
                                                             key->file, msg)
                         : formats::FileBytes::read(path, formats::kZkeyContainer, key->file, msg);
    if (st != CUZK_OK) return st;
    st = cuzk::abi::finish_key_open(std::move(key), flags, start, out, msg);
    if (st != CUZK_OK) msg = std::string(path) + ": " + msg;
    return st;
  });
}

CUZK_API cuzk_status cuzk_key_open_memory(const uint8_t* data, size_t len, uint32_t flags, cuzk_key** out, char* err,
                                          size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!data || !out) { msg = "data and out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    *out = nullptr;
    if (flags & CUZK_KEY_POINTS_ON_DEMAND) {
      msg = "CUZK_KEY_POINTS_ON_DEMAND needs a key file (cuzk_key_open): memory is already held";
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (flags & ~kKeyFlags) { msg = "unknown flags"; return CUZK_ERR_INVALID_ARGUMENT; }
    uint64_t start = cuzk::now_ns();
    auto key = std::make_unique<cuzk_key>();
    if (len > 0) {  // (an empty key is refused by the reader, with its message)
      cuzk_status st = formats::FileBytes::copy(data, len, key->file, msg);
      if (st != CUZK_OK) return st;
    }
    return cuzk::abi::finish_key_open(std::move(key), flags, start, out, msg);
  });
}

CUZK_API cuzk_status cuzk_key_get_info(const cuzk_key* key, cuzk_key_info* out, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!key || !out) { msg = "key and out must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    const auto& z = key->zkey;
    std::memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    out->curve = z.curve;
    out->n_vars = z.n_vars;
    out->n_public = z.n_public;
    out->n_constraints = z.n_constraints;
    out->domain_size = z.domain_size;
    out->log_domain = z.log_domain;
    out->n_coefs = z.n_coefs;
    out->fq_bytes = z.n8q;
    out->proof_bytes = z.curve == CUZK_CURVE_BN254 ? CUZK_PROOF_BYTES_BN254 : CUZK_PROOF_BYTES_BLS12_381;
    size_t vk_len = 0;
    std::string ignored;
    cuzk::prover::export_vk(z, nullptr, 0, &vk_len, ignored);
    out->vk_bytes = (uint32_t)vk_len;
    out->has_r1cs = key->r1cs ? 1 : 0;
    out->file_bytes = key->file.size();
    out->open_ns = key->open_ns;
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_key_attach_r1cs(cuzk_key* key, const char* r1cs_path, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!key || !r1cs_path) { msg = "key and r1cs_path must not be NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    if (key->provers.load() > 0) { msg = "cannot attach an .r1cs while provers use this key"; return CUZK_ERR_BUSY; }
    formats::FileBytes file;
    cuzk_status st = formats::FileBytes::read(r1cs_path, formats::kR1csContainer, file, msg);
    if (st != CUZK_OK) return st;
    auto r1cs = std::make_unique<formats::R1cs>();
    st = formats::parse_r1cs(file.data(), file.size(), *r1cs, msg);
    if (st != CUZK_OK) { msg = std::string(r1cs_path) + ": " + msg; return st; }
    const auto& z = key->zkey;
    if (r1cs->curve != z.curve) { msg = "the .r1cs is for another curve than the key"; return CUZK_ERR_CURVE_MISMATCH; }
    if (r1cs->n_wires != z.n_vars || r1cs->n_public() != z.n_public || r1cs->n_constraints != z.n_constraints) {
      msg = "the .r1cs does not belong to this key: wires/public/constraints " + std::to_string(r1cs->n_wires) + "/" +
            std::to_string(r1cs->n_public()) + "/" + std::to_string(r1cs->n_constraints) + " vs the key's " +
            std::to_string(z.n_vars) + "/" + std::to_string(z.n_public) + "/" + std::to_string(z.n_constraints);
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    key->r1cs_file = std::move(file);
    key->r1cs = std::move(r1cs);
    return CUZK_OK;
  });
}

CUZK_API cuzk_status cuzk_key_check_witness(const cuzk_key* key, const uint8_t* witness, size_t witness_len,
                                            uint32_t witness_format, uint32_t flags, cuzk_witness_check* out, char* err,
                                            size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (out && out->struct_size < sizeof *out) {
      msg = "cuzk_witness_check.struct_size is " + std::to_string(out->struct_size) + "; it must be at least " +
            std::to_string(sizeof *out);
      return CUZK_ERR_INVALID_ARGUMENT;
    }
    if (flags & ~CUZK_CHECK_SCAN) { msg = "unknown flags"; return CUZK_ERR_INVALID_ARGUMENT; }
    cuzk::prover::WitnessFacts facts;
    cuzk_status st = check_key_witness(key, witness, witness_len, witness_format, (flags & CUZK_CHECK_SCAN) != 0, facts,
                                       msg);
    if (out) {
      out->witness_curve = facts.curve;
      out->values = facts.values;
      out->first_bad_index = facts.first_bad_index;
      out->values_offset = facts.values_offset;
    }
    return st;
  });
}

CUZK_API cuzk_status cuzk_key_export_vk(const cuzk_key* key, uint8_t* out, size_t out_cap, size_t* out_len, char* err,
                                        size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!key) { msg = "key is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    return cuzk::prover::export_vk(key->zkey, out, out_cap, out_len, msg);
  });
}

CUZK_API cuzk_status cuzk_key_export_vk_alphabeta(const cuzk_key* key, uint8_t* out, size_t out_cap, size_t* out_len,
                                                  char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!key) { msg = "key is NULL"; return CUZK_ERR_INVALID_ARGUMENT; }
    return cuzk::prover::export_vk_alphabeta(key->zkey, out, out_cap, out_len, msg);
  });
}

CUZK_API cuzk_status cuzk_key_close(cuzk_key* key, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&](std::string& msg) {
    if (!key) return CUZK_OK;
    if (still_used(key->provers.load(), "key", msg)) return CUZK_ERR_BUSY;
    delete key;
    return CUZK_OK;
  });
}

}  // extern "C"
