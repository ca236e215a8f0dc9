// The file-format readers' promises: real snarkjs/circom files parse to the counts snarkjs itself
// reports, and no damaged file (hundreds of mutants per fixture) makes them crash, read out of
// bounds or return a result whose pointers leave the file.
//
// Run (from the repo root; the sanitizers are what make the mutation test a proof):
//   g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all
//       -Inative/include -Inative/src native/src/formats/*.cpp native/tests/formats_test.cpp
//       -o /tmp/formats_test && /tmp/formats_test
// Also built by CMake as `formats_test` (ctest runs it from the repo root).
// Fixtures: native/tests/data/<curve>/ (native/tests/data/make_data.sh, with snarkjs's own counts in
// expected.txt) and every tests/fixtures/<curve>/<circuit>/ present (tools/fixtures/make.mjs).
// Env: CUZK_REPO_ROOT (default: the current directory), CUZK_FUZZ_SEED, CUZK_FUZZ_SCALE (random
// mutants per file = 600 * scale).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif

#include "formats/binfile.hpp"
#include "formats/file_bytes.hpp"
#include "formats/primes.hpp"
#include "formats/r1cs.hpp"
#include "formats/wtns.hpp"
#include "formats/zkey.hpp"

namespace fs = std::filesystem;
using namespace cuzk::formats;
using Bytes = std::vector<uint8_t>;

namespace {

// ---- a minimal harness ---------------------------------------------------------------------------
int g_passed = 0;
int g_failed = 0;

bool expect(bool ok, const std::string& what) {
  if (ok) {
    ++g_passed;
  } else {
    ++g_failed;
    std::printf("FAIL: %s\n", what.c_str());
  }
  return ok;
}

bool expect_status(Status got, Status want, const std::string& err, const std::string& what) {
  return expect(got == want, what + ": status " + std::to_string(got) + ", expected " + std::to_string(want) +
                                 (err.empty() ? "" : " (" + err + ")"));
}

// ---- byte helpers --------------------------------------------------------------------------------
Bytes read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string read_text(const fs::path& path) {
  Bytes b = read_file(path);
  return std::string(b.begin(), b.end());
}

void put_u32(Bytes& b, uint64_t offset, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[offset + i] = static_cast<uint8_t>(v >> (8 * i));
}

void put_u64(Bytes& b, uint64_t offset, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[offset + i] = static_cast<uint8_t>(v >> (8 * i));
}

// LE bytes as a big-endian hex number without leading zeros, as JavaScript's toString(16).
std::string hex_of_le(const uint8_t* p, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (size_t i = n; i-- > 0;) {
    s += digits[p[i] >> 4];
    s += digits[p[i] & 15];
  }
  size_t first = s.find_first_not_of('0');
  return first == std::string::npos ? "0" : s.substr(first);
}

// A decimal string as n LE bytes (for public.json).
Bytes le_of_decimal(const std::string& dec, size_t n) {
  Bytes v(n, 0);
  for (char ch : dec) {
    unsigned carry = static_cast<unsigned>(ch - '0');
    for (size_t i = 0; i < n; ++i) {
      unsigned x = v[i] * 10u + carry;
      v[i] = static_cast<uint8_t>(x);
      carry = x >> 8;
    }
  }
  return v;
}

// a - b over n LE bytes (a >= b).
Bytes sub_le(const uint8_t* a, const uint8_t* b, size_t n) {
  Bytes out(n);
  int borrow = 0;
  for (size_t i = 0; i < n; ++i) {
    int d = int(a[i]) - int(b[i]) - borrow;
    borrow = d < 0;
    out[i] = static_cast<uint8_t>(d + (borrow ? 256 : 0));
  }
  return out;
}

bool is_one_le(const uint8_t* p, size_t n) {
  if (p[0] != 1) return false;
  for (size_t i = 1; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

// [p, p + len) lies within [base, base + n).
bool inside(const uint8_t* base, size_t n, const uint8_t* p, uint64_t len) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(base);
  const uintptr_t q = reinterpret_cast<uintptr_t>(p);
  return q >= b && q - b <= n && len <= n - (q - b);
}

const CurvePrimes& primes_of(cuzk_curve curve) {
  return curve == CUZK_CURVE_BN254 ? kSupportedCurves[0] : kSupportedCurves[1];
}

// ---- structural validity of an accepted result -----------------------------------------------
// What "structurally valid" means for a mutant the parser accepted: every pointer and count stays
// inside the bytes it was given, and the invariants the prover relies on hold.
std::string zkey_structure_problem(const ZkeyGroth16& z, const uint8_t* base, size_t n) {
  if (z.curve != CUZK_CURVE_BN254 && z.curve != CUZK_CURVE_BLS12_381) return "curve";
  if (z.n8q != primes_of(z.curve).n8q || z.n8r != 32) return "n8q/n8r";
  if (z.domain_size == 0 || (z.domain_size & (z.domain_size - 1)) != 0) return "domain not a power of two";
  if ((1ull << z.log_domain) != z.domain_size) return "log_domain";
  if (z.n_public >= z.n_vars) return "n_public >= n_vars";
  if (uint64_t(z.n_constraints) + z.n_public + 1 > z.domain_size) return "constraints do not fit the domain";
  const uint64_t g1 = z.g1_bytes(), g2 = z.g2_bytes();
  const struct {
    const uint8_t* p;
    uint64_t len;
    const char* name;
  } spans[] = {{z.q, z.n8q, "q"},
               {z.r, z.n8r, "r"},
               {z.alpha1, g1, "alpha1"},
               {z.beta1, g1, "beta1"},
               {z.beta2, g2, "beta2"},
               {z.gamma2, g2, "gamma2"},
               {z.delta1, g1, "delta1"},
               {z.delta2, g2, "delta2"},
               {z.ic, (z.n_public + 1ull) * g1, "ic"},
               {z.points_a, z.n_vars * g1, "A"},
               {z.points_b1, z.n_vars * g1, "B1"},
               {z.points_b2, z.n_vars * g2, "B2"},
               {z.points_c, uint64_t(z.n_private()) * g1, "C"},
               {z.points_h, z.domain_size * g1, "H"},
               {z.coefs, z.n_coefs * z.coef_record_bytes(), "coefs"}};
  for (const auto& s : spans) {
    if (s.p == nullptr || !inside(base, n, s.p, s.len)) return std::string(s.name) + " outside the file";
  }
  for (uint32_t i = 0; i < z.n_coefs; ++i) {
    const ZkeyCoef c = z.coef(i);
    if (c.matrix > 1 || c.constraint >= z.domain_size || c.signal >= z.n_vars) return "coefficient out of range";
  }
  return "";
}

std::string r1cs_structure_problem(const R1cs& r, const uint8_t* base, size_t n) {
  if (r.curve != CUZK_CURVE_BN254 && r.curve != CUZK_CURVE_BLS12_381) return "curve";
  if (r.n8 != 32 || !inside(base, n, r.prime, r.n8)) return "prime";
  if (1ull + r.n_pub_out + r.n_pub_in + r.n_prv_in > r.n_wires) return "counts exceed n_wires";
  if (r.constraint_offsets.size() != r.n_constraints) return "constraint_offsets size";
  if (!inside(base, n, r.constraints, r.constraints_size)) return "constraints outside the file";
  if (r.wire_labels != nullptr && !inside(base, n, r.wire_labels, 8ull * r.n_wires)) return "labels outside";
  uint64_t terms[3] = {0, 0, 0};
  for (uint32_t c = 0; c < r.n_constraints; ++c) {
    if (r.constraint_offsets[c] + 12 > r.constraints_size) return "constraint offset outside the section";
    for (uint32_t m = 0; m < 3; ++m) {
      const LinearCombination lc = r.lc(c, m);
      for (R1csTerm t : lc) {
        if (t.wire >= r.n_wires) return "wire out of range";
        if (!inside(r.constraints, r.constraints_size, t.value, r.n8)) return "term outside the section";
      }
      terms[m] += lc.size();
    }
  }
  for (int m = 0; m < 3; ++m) {
    if (terms[m] != r.n_terms[m]) return "n_terms";
  }
  return "";
}

std::string wtns_structure_problem(const Wtns& w, const uint8_t* base, size_t n) {
  if (w.curve != CUZK_CURVE_BN254 && w.curve != CUZK_CURVE_BLS12_381) return "curve";
  if (w.n8 != 32 || !inside(base, n, w.prime, w.n8)) return "prime";
  if (!inside(base, n, w.values, uint64_t(w.n_witness) * w.n8)) return "values outside the file";
  return "";
}

// ---- the mutation runner ------------------------------------------------------------------------
enum class FileKind { Zkey, Wtns, R1cs };

const ContainerKind& container_of(FileKind kind) {
  return kind == FileKind::Zkey ? kZkeyContainer : kind == FileKind::Wtns ? kWtnsContainer : kR1csContainer;
}

struct MutationStats {
  uint64_t tried = 0;
  uint64_t rejected = 0;
  uint64_t accepted = 0;
  std::map<int, uint64_t> by_status;
};

MutationStats g_total;

// Where each mutant is parsed from: the end of a heap buffer, the bytes before it poisoned, so that
// AddressSanitizer sees a read past the mutant's end (the heap's redzone) or before its start, as
// with an exact-size copy. The buffers are reused (one per size modulo 8, which keeps the start
// 8-byte aligned: ASan poisons in 8-byte granules); a fresh copy per mutant would map and unmap
// every large one under ASan, most of the test's time.
class MutantBuffers {
 public:
  ~MutantBuffers() {
    for (int r = 0; r < 8; r++) ASAN_UNPOISON_MEMORY_REGION(buf_[r].get(), size_[r]);
  }
  const uint8_t* place(const Bytes& mutant) {
    const size_t n = mutant.size(), r = n % 8;
    if (size_[r] < n || !buf_[r]) {
      ASAN_UNPOISON_MEMORY_REGION(buf_[r].get(), size_[r]);
      size_[r] = n ? n : 8;
      buf_[r].reset(new uint8_t[size_[r]]);
    }
    uint8_t* base = buf_[r].get();
    ASAN_UNPOISON_MEMORY_REGION(base, size_[r]);
    uint8_t* at = base + (size_[r] - n);
    if (n != 0) std::memcpy(at, mutant.data(), n);
    ASAN_POISON_MEMORY_REGION(base, size_[r] - n);
    return at;
  }

 private:
  std::unique_ptr<uint8_t[]> buf_[8];
  size_t size_[8] = {};
};
MutantBuffers g_mutant_buffers;

// Parses one mutant, placed so that AddressSanitizer sees any read outside it.
void run_mutant(FileKind kind, const Bytes& mutant, const std::string& label, MutationStats& stats) {
  const size_t n = mutant.size();
  const uint8_t* data = g_mutant_buffers.place(mutant);

  std::string err;
  Status status = CUZK_ERR_INTERNAL;
  std::string problem;
  try {
    BinFile bin;
    std::string bin_err;
    parse_binfile(data, n, container_of(kind), bin, bin_err);
    switch (kind) {
      case FileKind::Zkey: {
        ZkeyGroth16 z;
        status = parse_zkey(data, n, z, err);
        if (status == CUZK_OK) problem = zkey_structure_problem(z, data, n);
        break;
      }
      case FileKind::Wtns: {
        Wtns w;
        status = parse_wtns(data, n, w, err);
        if (status == CUZK_OK) problem = wtns_structure_problem(w, data, n);
        break;
      }
      case FileKind::R1cs: {
        R1cs r;
        status = parse_r1cs(data, n, r, err);
        if (status == CUZK_OK) problem = r1cs_structure_problem(r, data, n);
        break;
      }
    }
  } catch (const std::exception& e) {
    problem = std::string("threw ") + e.what();
  }

  ++stats.tried;
  ++stats.by_status[status];
  if (!problem.empty()) {
    expect(false, "mutant " + label + ": " + problem);
    return;
  }
  if (status == CUZK_OK) {
    ++stats.accepted;
    return;
  }
  ++stats.rejected;
  const bool known = status == CUZK_ERR_FORMAT || status == CUZK_ERR_CURVE_MISMATCH || status == CUZK_ERR_UNSUPPORTED;
  if (!known || err.empty()) {
    expect(false, "mutant " + label + ": status " + std::to_string(status) + " with message '" + err + "'");
  }
}

// Reassembles a binfile from sections of `original` in `order` (indices may repeat or be left out).
Bytes rebuild(const Bytes& original, const BinFile& bin, const std::vector<size_t>& order) {
  Bytes out(original.begin(), original.begin() + 8);
  out.resize(12);
  put_u32(out, 8, static_cast<uint32_t>(order.size()));
  for (size_t i : order) {
    const SectionEntry& s = bin.sections[i];
    out.insert(out.end(), original.begin() + s.header_offset, original.begin() + s.payload_offset + s.size);
  }
  return out;
}

struct Field {
  uint64_t offset;
  int width;  // 4 or 8
  std::string name;
};

struct ValueField {
  uint64_t offset;
  uint32_t n8;
  const uint8_t* prime;  // the bound this value must stay under
  std::string name;
};

// The count and size fields of each kind, found from the original's parse.
void describe_fields(FileKind kind, const Bytes& file, const BinFile& bin, std::vector<Field>& fields,
                     std::vector<ValueField>& values) {
  for (size_t i = 0; i < bin.sections.size(); ++i) {
    const SectionEntry& s = bin.sections[i];
    fields.push_back({s.header_offset, 4, "section[" + std::to_string(i) + "].id"});
    fields.push_back({s.header_offset + 4, 8, "section[" + std::to_string(i) + "].size"});
  }
  fields.push_back({4, 4, "version"});
  fields.push_back({8, 4, "n_sections"});
  auto offset_of = [&](uint32_t id) {
    for (const SectionEntry& s : bin.sections) {
      if (s.id == id) return s.payload_offset;
    }
    return uint64_t(0);
  };
  const uint8_t* data = file.data();
  if (kind == FileKind::Zkey) {
    ZkeyGroth16 z;
    std::string err;
    parse_zkey(data, file.size(), z, err);
    const uint64_t s1 = offset_of(1), s2 = offset_of(2), s4 = offset_of(4);
    fields.push_back({s1, 4, "protocol"});
    fields.push_back({s2, 4, "n8q"});
    fields.push_back({s2 + 4 + z.n8q, 4, "n8r"});
    const uint64_t counts = s2 + 8 + z.n8q + z.n8r;
    fields.push_back({counts, 4, "n_vars"});
    fields.push_back({counts + 4, 4, "n_public"});
    fields.push_back({counts + 8, 4, "domain_size"});
    fields.push_back({s4, 4, "n_coefs"});
    const uint64_t rec = z.coef_record_bytes();
    for (uint64_t i : {uint64_t(0), uint64_t(1), uint64_t(z.n_coefs / 2), uint64_t(z.n_coefs - 2),
                       uint64_t(z.n_coefs - 1)}) {
      const uint64_t at = s4 + 4 + i * rec;
      const std::string name = "coef[" + std::to_string(i) + "]";
      fields.push_back({at, 4, name + ".matrix"});
      fields.push_back({at + 4, 4, name + ".constraint"});
      fields.push_back({at + 8, 4, name + ".signal"});
      values.push_back({at + 12, z.n8r, z.r, name + ".value"});
    }
    values.push_back({s2 + 4, z.n8q, z.q, "q"});
    values.push_back({s2 + 8 + z.n8q, z.n8r, z.r, "r"});
    const uint64_t points = counts + 12;
    for (uint32_t c = 0; c < 18; c += 3) {
      values.push_back({points + uint64_t(c) * z.n8q, z.n8q, z.q, "header coordinate " + std::to_string(c)});
    }
    values.push_back({uint64_t(z.ic - data) + z.n8q, z.n8q, z.q, "IC[0].y"});
  } else if (kind == FileKind::Wtns) {
    Wtns w;
    std::string err;
    parse_wtns(data, file.size(), w, err);
    const uint64_t s1 = offset_of(1), s2 = offset_of(2);
    fields.push_back({s1, 4, "n8"});
    fields.push_back({s1 + 4 + w.n8, 4, "n_witness"});
    values.push_back({s1 + 4, w.n8, w.prime, "prime"});
    values.push_back({s2, w.n8, w.prime, "w[0]"});
    values.push_back({s2 + uint64_t(w.n_witness - 1) * w.n8, w.n8, w.prime, "w[last]"});
  } else {
    R1cs r;
    std::string err;
    parse_r1cs(data, file.size(), r, err);
    const uint64_t s1 = offset_of(1);
    const uint64_t counts = s1 + 4 + r.n8;
    fields.push_back({s1, 4, "n8"});
    fields.push_back({counts, 4, "n_wires"});
    fields.push_back({counts + 4, 4, "n_pub_out"});
    fields.push_back({counts + 8, 4, "n_pub_in"});
    fields.push_back({counts + 12, 4, "n_prv_in"});
    fields.push_back({counts + 16, 8, "n_labels"});
    fields.push_back({counts + 24, 4, "n_constraints"});
    values.push_back({s1 + 4, r.n8, r.prime, "prime"});
    for (uint32_t c : {0u, r.n_constraints / 2, r.n_constraints - 1}) {
      if (c >= r.n_constraints) continue;
      for (uint32_t m = 0; m < 3; ++m) {
        const LinearCombination lc = r.lc(c, m);
        const uint64_t count_at = uint64_t(lc.data() - data) - 4;
        const std::string name = "constraint[" + std::to_string(c) + "][" + std::to_string(m) + "]";
        fields.push_back({count_at, 4, name + ".n_terms"});
        if (lc.size() > 0) {
          fields.push_back({count_at + 4, 4, name + ".term0.wire"});
          values.push_back({count_at + 8, r.n8, r.prime, name + ".term0.value"});
        }
      }
    }
  }
}

// Every mutant family of the brief, on one file; returns this file's counts.
MutationStats mutate_file(FileKind kind, const Bytes& original, const std::string& name, std::mt19937_64& rng,
                          int scale) {
  MutationStats stats;
  BinFile bin;
  std::string err;
  if (!expect(parse_binfile(original.data(), original.size(), container_of(kind), bin, err) == CUZK_OK,
              name + " parses as a binfile before mutation (" + err + ")")) {
    return stats;
  }
  const size_t size = original.size();
  auto run = [&](const Bytes& m, const std::string& label) { run_mutant(kind, m, name + " " + label, stats); };
  // Each mutant starts as a copy of the original in one reused vector (no allocation per mutant).
  Bytes scratch;
  auto copy_of_original = [&](size_t length) -> Bytes& {
    scratch.assign(original.begin(), original.begin() + length);
    return scratch;
  };

  // Truncations: every length for small files, else the start, every section boundary and a sample.
  std::vector<uint64_t> lengths;
  if (size <= 4096) {
    for (uint64_t l = 0; l < size; ++l) lengths.push_back(l);
  } else {
    for (uint64_t l = 0; l <= 256; ++l) lengths.push_back(l);
    for (const SectionEntry& s : bin.sections) {
      for (uint64_t at : {s.header_offset, s.payload_offset, s.payload_offset + s.size}) {
        for (int d = -13; d <= 13; ++d) {
          if (int64_t(at) + d >= 0 && uint64_t(int64_t(at) + d) < size) lengths.push_back(at + d);
        }
      }
    }
    for (int i = 0; i < 300; ++i) lengths.push_back(rng() % size);
  }
  for (uint64_t l : lengths) run(copy_of_original(l), "truncated to " + std::to_string(l));

  // Trailing bytes.
  for (size_t extra : {1, 4, 12, 100}) {
    Bytes& m = copy_of_original(size);
    m.resize(size + extra, 0);
    run(m, "with " + std::to_string(extra) + " trailing bytes");
  }

  // Magic.
  for (int i = 0; i < 4; ++i) {
    Bytes& m = copy_of_original(size);
    m[i] ^= 0x20;
    run(m, "magic byte " + std::to_string(i) + " changed");
  }
  for (const char* other : {"zkey", "wtns", "r1cs", "ptau", "\0\0\0\0"}) {
    Bytes& m = copy_of_original(size);
    std::memcpy(m.data(), other, 4);
    run(m, std::string("magic ") + other);
  }

  // Count and size fields: table fields and in-section counts, set to edge values.
  std::vector<Field> fields;
  std::vector<ValueField> values;
  describe_fields(kind, original, bin, fields, values);
  for (const Field& f : fields) {
    if (f.offset + f.width > size) continue;
    const uint64_t v = f.width == 4 ? load_u32_le(original.data() + f.offset) : load_u64_le(original.data() + f.offset);
    std::vector<uint64_t> candidates = {0, 1, 2, 3, 4, 5, v - 1, v + 1, v * 2, v + 12, 0x7fffffff, 0x80000000,
                                        0xfffffffe, 0xffffffff, size, size - f.offset};
    if (f.width == 8) {
      for (uint64_t big : {uint64_t(1) << 32, (uint64_t(1) << 32) + v, uint64_t(1) << 63, ~uint64_t(0),
                           ~uint64_t(0) - 11, ~uint64_t(0) - f.offset}) {
        candidates.push_back(big);
      }
    }
    for (const SectionEntry& s : bin.sections) candidates.push_back(s.id);  // duplicate ids
    for (uint64_t c : candidates) {
      if (c == v) continue;
      Bytes& m = copy_of_original(size);
      if (f.width == 4) {
        put_u32(m, f.offset, static_cast<uint32_t>(c));
      } else {
        put_u64(m, f.offset, c);
      }
      run(m, f.name + " = " + std::to_string(c));
    }
  }

  // Field elements: at, above and just below their bound.
  for (const ValueField& f : values) {
    if (f.offset + f.n8 > size) continue;
    Bytes at_bound(f.prime, f.prime + f.n8);
    Bytes below = at_bound;
    below[0] -= 1;  // primes are odd
    for (const auto& [label, bytes] : std::vector<std::pair<std::string, Bytes>>{
             {"= prime", at_bound},
             {"= prime - 1", below},
             {"= all ones", Bytes(f.n8, 0xff)},
             {"= 0", Bytes(f.n8, 0)}}) {
      Bytes& m = copy_of_original(size);
      std::copy(bytes.begin(), bytes.end(), m.begin() + f.offset);
      run(m, f.name + " " + label);
    }
  }

  // Whole sections: shuffled (valid), duplicated, dropped, ids swapped.
  const size_t n_sections = bin.sections.size();
  std::vector<size_t> order(n_sections);
  for (size_t i = 0; i < n_sections; ++i) order[i] = i;
  for (int i = 0; i < 8; ++i) {
    std::shuffle(order.begin(), order.end(), rng);
    run(rebuild(original, bin, order), "sections shuffled");
  }
  for (size_t i = 0; i < n_sections; ++i) {
    std::vector<size_t> dup(n_sections);
    for (size_t j = 0; j < n_sections; ++j) dup[j] = j;
    dup.push_back(i);
    run(rebuild(original, bin, dup), "section " + std::to_string(bin.sections[i].id) + " duplicated");
    std::vector<size_t> dropped;
    for (size_t j = 0; j < n_sections; ++j) {
      if (j != i) dropped.push_back(j);
    }
    run(rebuild(original, bin, dropped), "section " + std::to_string(bin.sections[i].id) + " dropped");
    for (size_t j = i + 1; j < n_sections; ++j) {
      Bytes& m = copy_of_original(size);
      put_u32(m, bin.sections[i].header_offset, bin.sections[j].id);
      put_u32(m, bin.sections[j].header_offset, bin.sections[i].id);
      run(m, "section ids " + std::to_string(i) + "," + std::to_string(j) + " swapped");
    }
  }

  // Random bit flips: anywhere, and concentrated on the headers where structure lives.
  std::vector<uint64_t> structure;
  for (uint64_t i = 0; i < 12; ++i) structure.push_back(i);
  for (const SectionEntry& s : bin.sections) {
    for (uint64_t i = s.header_offset; i < s.payload_offset + std::min<uint64_t>(s.size, 64); ++i) {
      structure.push_back(i);
    }
  }
  const int n_random = 600 * scale;
  for (int i = 0; i < n_random; ++i) {
    Bytes& m = copy_of_original(size);
    const int flips = 1 << (rng() % 5);  // 1..16
    const bool on_structure = i % 2 == 1;
    for (int f = 0; f < flips; ++f) {
      const uint64_t at = on_structure ? structure[rng() % structure.size()] : rng() % size;
      m[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
    }
    run(m, "random flips #" + std::to_string(i));
  }
  return stats;
}

// ---- fixtures ----------------------------------------------------------------------------------
struct Fixture {
  std::string name;  // e.g. "bn254/single"
  cuzk_curve curve;
  fs::path dir;
  std::vector<fs::path> zkeys;
  std::map<std::string, std::string> expected;  // expected.txt, or the manifest's entry
  std::vector<std::string> witness_hex;         // expected.txt: w[i] as hex
  std::vector<std::string> public_signals;      // public.json: decimal strings
};

// The number after "key": in the manifest object of `dir` (the fields before "files").
std::string manifest_number(const std::string& manifest, const std::string& dir, const std::string& key) {
  const size_t at = manifest.find("\"dir\": \"" + dir + "\"");
  if (at == std::string::npos) return "";
  const size_t start = manifest.rfind('{', at);
  const size_t end = manifest.find("\"files\"", at);
  const size_t k = manifest.find("\"" + key + "\": ", start);
  if (k == std::string::npos || k > end) return "";
  const size_t v = k + key.size() + 4;
  return manifest.substr(v, manifest.find_first_not_of("0123456789", v) - v);
}

std::vector<std::string> json_strings(const std::string& text) {
  std::vector<std::string> out;
  for (size_t i = text.find('"'); i != std::string::npos; i = text.find('"', i + 1)) {
    const size_t j = text.find('"', i + 1);
    if (j == std::string::npos) break;
    out.push_back(text.substr(i + 1, j - i - 1));
    i = j;
  }
  return out;
}

std::vector<Fixture> find_fixtures(const fs::path& root) {
  std::vector<Fixture> out;
  auto curve_of = [](const std::string& dir_name, cuzk_curve& curve) {
    if (dir_name == "bn254") curve = CUZK_CURVE_BN254;
    else if (dir_name == "bls12_381") curve = CUZK_CURVE_BLS12_381;
    else return false;
    return true;
  };
  // Our own small set, with the counts snarkjs reports.
  for (const char* c : {"bn254", "bls12_381"}) {
    const fs::path dir = root / "native/tests/data" / c;
    if (!fs::exists(dir / "expected.txt")) continue;
    Fixture f{std::string("data/") + c, CUZK_CURVE_BN254, dir, {dir / "circuit.zkey", dir / "contributed.zkey"},
              {}, {}, {}};
    curve_of(c, f.curve);
    std::istringstream in(read_text(dir / "expected.txt"));
    std::string key, value;
    while (in >> key) {
      if (key == "wtns_value_hex") {
        size_t index;
        in >> index >> value;
        f.witness_hex.resize(std::max(f.witness_hex.size(), index + 1));
        f.witness_hex[index] = value;
      } else {
        in >> value;
        f.expected[key] = value;
      }
    }
    out.push_back(f);
  }
  // The project's fixtures, checked against tools/fixtures' manifest and snarkjs's public.json.
  const fs::path fixtures = root / "tests/fixtures";
  const std::string manifest = fs::exists(fixtures / "manifest.json") ? read_text(fixtures / "manifest.json") : "";
  if (fs::exists(fixtures)) {
    std::vector<fs::path> dirs;
    for (const auto& curve_dir : fs::directory_iterator(fixtures)) {
      if (!curve_dir.is_directory()) continue;
      for (const auto& circuit_dir : fs::directory_iterator(curve_dir.path())) dirs.push_back(circuit_dir.path());
    }
    std::sort(dirs.begin(), dirs.end());
    for (const fs::path& dir : dirs) {
      Fixture f{dir.parent_path().filename().string() + "/" + dir.filename().string(), CUZK_CURVE_BN254, dir,
                {dir / "circuit.zkey"}, {}, {}, {}};
      if (!curve_of(dir.parent_path().filename().string(), f.curve)) continue;
      if (!fs::exists(dir / "circuit.zkey") || !fs::exists(dir / "circuit.r1cs") || !fs::exists(dir / "witness.wtns")) {
        continue;
      }
      const std::string rel = "tests/fixtures/" + f.name;
      for (const char* key : {"n_constraints", "n_vars", "n_public", "n_outputs", "n_public_inputs",
                              "n_private_inputs", "domain_size", "log"}) {
        const std::string v = manifest_number(manifest, rel, key);
        if (!v.empty()) f.expected[std::string("manifest_") + key] = v;
      }
      if (fs::exists(dir / "public.json")) f.public_signals = json_strings(read_text(dir / "public.json"));
      out.push_back(f);
    }
  }
  return out;
}

uint64_t expected_u64(const Fixture& f, const std::string& key, bool& present) {
  auto it = f.expected.find(key);
  present = it != f.expected.end();
  return present ? std::stoull(it->second) : 0;
}

void expect_count(const Fixture& f, const std::string& key, uint64_t got, const std::string& what) {
  bool present = false;
  const uint64_t want = expected_u64(f, key, present);
  if (present) {
    expect(got == want, f.name + ": " + what + " = " + std::to_string(got) + ", expected " + std::to_string(want));
  }
}

// ---- the promises on real files ----------------------------------------------------------------
void test_fixture(const Fixture& f) {
  std::string err;
  FileBytes r1cs_file, wtns_file;
  if (!expect(FileBytes::read((f.dir / "circuit.r1cs").string(), kR1csContainer, r1cs_file, err) == CUZK_OK, err)) return;
  if (!expect(FileBytes::read((f.dir / "witness.wtns").string(), kWtnsContainer, wtns_file, err) == CUZK_OK, err)) return;

  R1cs r1cs;
  Status s = parse_r1cs(r1cs_file.data(), r1cs_file.size(), r1cs, err);
  if (!expect_status(s, CUZK_OK, err, f.name + " circuit.r1cs parses")) return;
  Wtns wtns;
  s = parse_wtns(wtns_file.data(), wtns_file.size(), wtns, err);
  if (!expect_status(s, CUZK_OK, err, f.name + " witness.wtns parses")) return;

  expect(r1cs.curve == f.curve, f.name + ": r1cs curve");
  expect(wtns.curve == f.curve, f.name + ": wtns curve");
  expect_count(f, "r1cs_n_wires", r1cs.n_wires, "r1cs n_wires");
  expect_count(f, "r1cs_n_constraints", r1cs.n_constraints, "r1cs n_constraints");
  expect_count(f, "r1cs_n_prv_in", r1cs.n_prv_in, "r1cs n_prv_in");
  expect_count(f, "r1cs_n_pub_in", r1cs.n_pub_in, "r1cs n_pub_in");
  expect_count(f, "r1cs_n_pub_out", r1cs.n_pub_out, "r1cs n_pub_out");
  expect_count(f, "r1cs_n_labels", r1cs.n_labels, "r1cs n_labels");
  expect_count(f, "manifest_n_constraints", r1cs.n_constraints, "r1cs n_constraints");
  expect_count(f, "manifest_n_vars", r1cs.n_wires, "r1cs n_wires");
  expect_count(f, "manifest_n_outputs", r1cs.n_pub_out, "r1cs n_pub_out");
  expect_count(f, "manifest_n_public_inputs", r1cs.n_pub_in, "r1cs n_pub_in");
  expect_count(f, "manifest_n_private_inputs", r1cs.n_prv_in, "r1cs n_prv_in");
  expect_count(f, "wtns_n_witness", wtns.n_witness, "wtns n_witness");
  expect(wtns.n_witness == r1cs.n_wires, f.name + ": wtns n_witness == r1cs n_wires");
  expect(equal_bytes(wtns.prime, r1cs.prime, 32), f.name + ": wtns prime == r1cs prime");
  expect(r1cs.wire_labels != nullptr, f.name + ": r1cs has its wire map");
  for (size_t i = 0; i < f.witness_hex.size() && i < wtns.n_witness; ++i) {
    expect(hex_of_le(wtns.values + 32 * i, 32) == f.witness_hex[i], f.name + ": w[" + std::to_string(i) + "]");
  }
  expect(wtns.n_witness > 0 && is_one_le(wtns.values, 32), f.name + ": w[0] = 1");
  for (size_t i = 0; i < f.public_signals.size() && i + 1 < wtns.n_witness; ++i) {
    const Bytes want = le_of_decimal(f.public_signals[i], 32);
    expect(equal_bytes(want.data(), wtns.values + 32 * (i + 1), 32),
           f.name + ": public.json[" + std::to_string(i) + "] == w[" + std::to_string(i + 1) + "]");
  }
  expect(r1cs_structure_problem(r1cs, r1cs_file.data(), r1cs_file.size()).empty(), f.name + ": r1cs structure");

  for (const fs::path& zkey_path : f.zkeys) {
    const std::string zname = f.name + "/" + zkey_path.filename().string();
    FileBytes zkey_file;
    if (!expect(FileBytes::read(zkey_path.string(), kZkeyContainer, zkey_file, err) == CUZK_OK, err)) {
      continue;
    }
    ZkeyGroth16 z;
    s = parse_zkey(zkey_file.data(), zkey_file.size(), z, err);
    if (!expect_status(s, CUZK_OK, err, zname + " parses")) continue;
    expect(zkey_structure_problem(z, zkey_file.data(), zkey_file.size()).empty(), zname + ": structure");
    expect(z.curve == f.curve, zname + ": curve");
    expect_count(f, "zkey_n8q", z.n8q, "zkey n8q");
    expect_count(f, "zkey_n_vars", z.n_vars, "zkey n_vars");
    expect_count(f, "zkey_n_public", z.n_public, "zkey n_public");
    expect_count(f, "zkey_domain_size", z.domain_size, "zkey domain_size");
    expect_count(f, "zkey_log_domain", z.log_domain, "zkey log_domain");
    expect_count(f, "zkey_n_coefs", z.n_coefs, "zkey n_coefs");
    expect_count(f, "manifest_n_public", z.n_public, "zkey n_public");
    expect_count(f, "manifest_domain_size", z.domain_size, "zkey domain_size");
    expect_count(f, "manifest_log", z.log_domain, "zkey log_domain");
    expect_count(f, "manifest_n_constraints", z.n_constraints, "zkey n_constraints (derived)");

    // The key against its circuit: same counts, and the coefficient records are the circuit's A
    // and B terms in snarkjs's order, then the input rows.
    expect(z.n_vars == r1cs.n_wires, zname + ": n_vars == r1cs n_wires");
    expect(z.n_public == r1cs.n_public(), zname + ": n_public == r1cs outputs + public inputs");
    expect(z.n_constraints == r1cs.n_constraints, zname + ": derived n_constraints == r1cs n_constraints (" +
                                                      std::to_string(z.n_constraints) + " vs " +
                                                      std::to_string(r1cs.n_constraints) + ")");
    expect(equal_bytes(z.r, wtns.prime, 32), zname + ": zkey r == wtns prime");
    expect(uint64_t(z.n_coefs) == r1cs.n_terms[0] + r1cs.n_terms[1] + z.n_public + 1, zname + ": n_coefs");
    const CurvePrimes& primes = primes_of(z.curve);
    const Bytes minus_one_stored = sub_le(primes.r, primes.r_squared_mod_r, 32);  // -1 * R^2 mod r
    Bytes r_minus_1(primes.r, primes.r + 32);
    r_minus_1[0] -= 1;  // r is odd
    uint32_t next = 0;
    bool records_match = true;
    uint64_t values_checked = 0;
    for (uint32_t c = 0; c < r1cs.n_constraints && records_match; ++c) {
      for (uint32_t m = 0; m < 2 && records_match; ++m) {
        for (R1csTerm t : r1cs.lc(c, m)) {
          if (next >= z.n_coefs) {
            records_match = false;
            break;
          }
          const ZkeyCoef k = z.coef(next++);
          records_match = k.matrix == m && k.constraint == c && k.signal == t.wire;
          // Values 1 and -1 can be checked without field arithmetic: R^2 and r - R^2.
          if (is_one_le(t.value, 32)) {
            records_match = records_match && equal_bytes(k.value, primes.r_squared_mod_r, 32);
            ++values_checked;
          } else if (equal_bytes(t.value, r_minus_1.data(), 32)) {
            records_match = records_match && equal_bytes(k.value, minus_one_stored.data(), 32);
            ++values_checked;
          }
          if (!records_match) break;
        }
      }
    }
    expect(records_match,
           zname + ": coefficient records follow the r1cs A/B terms (record " + std::to_string(next) + ")");
    expect(values_checked > 0, zname + ": some coefficients are 1 or -1 and match R^2 / r - R^2");
    for (uint32_t s_in = 0; s_in <= z.n_public && next < z.n_coefs; ++s_in) {
      const ZkeyCoef k = z.coef(next++);
      expect(k.matrix == 0 && k.constraint == z.n_constraints + s_in && k.signal == s_in &&
                 equal_bytes(k.value, primes.r_squared_mod_r, 32),
             zname + ": input row " + std::to_string(s_in));
    }
    expect(next == z.n_coefs, zname + ": every record accounted for");
  }
}

// setup and contribute write the same key in different section orders (formats.md 0).
void test_section_orders(const Fixture& f) {
  if (f.zkeys.size() < 2) return;
  const Bytes a = read_file(f.zkeys[0]), b = read_file(f.zkeys[1]);
  BinFile bin_a, bin_b;
  std::string err;
  parse_binfile(a.data(), a.size(), kZkeyContainer, bin_a, err);
  parse_binfile(b.data(), b.size(), kZkeyContainer, bin_b, err);
  auto ids = [](const BinFile& bin) {
    std::string s;
    for (const SectionEntry& e : bin.sections) s += std::to_string(e.id) + ",";
    return s;
  };
  expect(ids(bin_a) == "1,2,4,3,9,8,5,6,7,10,",
         f.name + ": setup writes 1,2,4,3,9,8,5,6,7,10 (got " + ids(bin_a) + ")");
  expect(ids(bin_b) == "1,2,3,4,5,6,7,8,9,10,", f.name + ": contribute writes 1..10 (got " + ids(bin_b) + ")");
  ZkeyGroth16 za, zb;
  expect(parse_zkey(a.data(), a.size(), za, err) == CUZK_OK && parse_zkey(b.data(), b.size(), zb, err) == CUZK_OK,
         f.name + ": both orders parse");
  expect(za.n_coefs == zb.n_coefs && za.n_constraints == zb.n_constraints && za.domain_size == zb.domain_size &&
             std::memcmp(za.coefs, zb.coefs, za.n_coefs * za.coef_record_bytes()) == 0 &&
             std::memcmp(za.points_a, zb.points_a, za.n_vars * za.g1_bytes()) == 0,
         f.name + ": same key either way (contribute changes only delta, C and H)");
}

// ---- targeted cases: the right status and a useful message -------------------------------------
struct Parsed {
  Status status;
  std::string err;
};

Parsed parse_as(FileKind kind, const Bytes& b) {
  Parsed p{CUZK_OK, ""};
  if (kind == FileKind::Zkey) {
    ZkeyGroth16 z;
    p.status = parse_zkey(b.data(), b.size(), z, p.err);
  } else if (kind == FileKind::Wtns) {
    Wtns w;
    p.status = parse_wtns(b.data(), b.size(), w, p.err);
  } else {
    R1cs r;
    p.status = parse_r1cs(b.data(), b.size(), r, p.err);
  }
  return p;
}

void expect_parse(FileKind kind, const Bytes& b, Status want, const std::string& message_part,
                  const std::string& what) {
  const Parsed p = parse_as(kind, b);
  if (expect_status(p.status, want, p.err, what) && !message_part.empty()) {
    expect(p.err.find(message_part) != std::string::npos,
           what + ": message '" + p.err + "' mentions '" + message_part + "'");
  }
}

uint64_t payload_of(const Bytes& file, const ContainerKind& kind, uint32_t id) {
  BinFile bin;
  std::string err;
  parse_binfile(file.data(), file.size(), kind, bin, err);
  for (const SectionEntry& s : bin.sections) {
    if (s.id == id) return s.payload_offset;
  }
  return 0;
}

void test_targeted(const Fixture& f) {
  const Bytes zkey = read_file(f.zkeys[0]);
  const Bytes r1cs = read_file(f.dir / "circuit.r1cs");
  const Bytes wtns = read_file(f.dir / "witness.wtns");
  const std::string n = f.name + ": ";
  const uint64_t z1 = payload_of(zkey, kZkeyContainer, 1), z2 = payload_of(zkey, kZkeyContainer, 2), z4 = payload_of(zkey, kZkeyContainer, 4);
  const uint32_t n8q = load_u32_le(zkey.data() + z2);

  expect_parse(FileKind::Zkey, Bytes(), CUZK_ERR_FORMAT, "empty", n + "empty zkey");
  {
    ZkeyGroth16 z;
    std::string err;
    expect_status(parse_zkey(nullptr, 0, z, err), CUZK_ERR_FORMAT, err, n + "null zkey");
  }
  expect_parse(FileKind::Zkey, Bytes(zkey.begin(), zkey.begin() + 11), CUZK_ERR_FORMAT, "truncated",
               n + "11-byte zkey");
  expect_parse(FileKind::Wtns, zkey, CUZK_ERR_FORMAT, "magic is 'zkey'", n + "zkey read as wtns");
  for (uint32_t protocol : {2u, 10u, 0u}) {
    Bytes m = zkey;
    put_u32(m, z1, protocol);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_UNSUPPORTED, "protocol " + std::to_string(protocol),
                 n + "protocol " + std::to_string(protocol));
  }
  {
    Bytes m = zkey;
    put_u32(m, 4, 2);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "version 2", n + "zkey version 2");
  }
  {
    Bytes m = zkey;  // another 32/48-byte prime as q
    m[z2 + 4] ^= 0x02;
    expect_parse(FileKind::Zkey, m, CUZK_ERR_CURVE_MISMATCH, "-bit prime", n + "foreign q");
  }
  {
    Bytes m = zkey;  // the other curve's r with this curve's q
    const CurvePrimes& other = f.curve == CUZK_CURVE_BN254 ? kSupportedCurves[1] : kSupportedCurves[0];
    std::copy(other.r, other.r + 32, m.begin() + z2 + 8 + n8q);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_CURVE_MISMATCH, "unsupported curve", n + "mixed q and r");
  }
  {
    Bytes m = zkey;
    put_u32(m, z2, 40);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "element size (n8", n + "n8q = 40 without a matching section size");
  }
  const uint64_t counts = z2 + 8 + n8q + 32;
  for (uint32_t domain : {0u, 3u, 48u}) {
    Bytes m = zkey;
    put_u32(m, counts + 8, domain);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "power of two", n + "domain " + std::to_string(domain));
  }
  {
    Bytes m = zkey;
    put_u32(m, counts + 8, 1u << 30);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, f.curve == CUZK_CURVE_BN254 ? "2^28" : "section 9",
                 n + "domain 2^30");
  }
  {
    Bytes m = zkey;
    put_u32(m, counts + 4, load_u32_le(zkey.data() + counts));
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "n_public", n + "n_public == n_vars");
  }
  {
    Bytes m = zkey;  // alpha1.x = q
    std::copy(primes_of(f.curve).q, primes_of(f.curve).q + n8q, m.begin() + counts + 12);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "alpha1", n + "alpha1.x = q");
  }
  {
    Bytes m = zkey;  // first record in matrix C
    put_u32(m, z4 + 4, 2);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "matrix 2", n + "coefficient in matrix 2");
  }
  {
    Bytes m = zkey;  // first record's value = r
    std::copy(primes_of(f.curve).r, primes_of(f.curve).r + 32, m.begin() + z4 + 4 + 12);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "not below r", n + "coefficient = r");
  }
  {
    Bytes m = zkey;  // first record's value = r - 1: valid
    std::copy(primes_of(f.curve).r, primes_of(f.curve).r + 32, m.begin() + z4 + 4 + 12);
    m[z4 + 4 + 12] -= 1;
    expect_parse(FileKind::Zkey, m, CUZK_OK, "", n + "coefficient = r - 1 accepted");
  }
  {
    Bytes m = zkey;  // last record is input row n_public: make its coefficient 2*R^2 (not 1)
    const uint32_t n_coefs = load_u32_le(zkey.data() + z4);
    const uint64_t last = z4 + 4 + uint64_t(n_coefs - 1) * 44;
    m[last + 12] ^= 0x01;
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "coefficient 1", n + "input row with a coefficient other than 1");
    Bytes d = zkey;  // drop the last record (an input row)
    put_u32(d, z4, n_coefs - 1);
    BinFile bin;
    std::string err;
    parse_binfile(zkey.data(), zkey.size(), kZkeyContainer, bin, err);
    for (const SectionEntry& s : bin.sections) {
      if (s.id == 4) put_u64(d, s.header_offset + 4, s.size - 44);
    }
    d.erase(d.begin() + last, d.begin() + last + 44);
    expect_parse(FileKind::Zkey, d, CUZK_ERR_FORMAT, "input row", n + "an input row missing");
  }
  {
    Bytes m = zkey;
    put_u32(m, 8, load_u32_le(zkey.data() + 8) + 1);
    expect_parse(FileKind::Zkey, m, CUZK_ERR_FORMAT, "truncated", n + "one section more than present");
    Bytes t = zkey;
    t.push_back(0);
    expect_parse(FileKind::Zkey, t, CUZK_ERR_FORMAT, "follow", n + "trailing byte");
  }
  {
    BinFile bin;
    std::string err;
    parse_binfile(zkey.data(), zkey.size(), kZkeyContainer, bin, err);
    std::vector<size_t> order;
    for (size_t i = 0; i < bin.sections.size(); ++i) order.push_back(i);
    order.push_back(0);
    expect_parse(FileKind::Zkey, rebuild(zkey, bin, order), CUZK_ERR_FORMAT, "twice", n + "duplicate section");
    order.pop_back();
    std::reverse(order.begin(), order.end());
    expect_parse(FileKind::Zkey, rebuild(zkey, bin, order), CUZK_OK, "", n + "sections reversed");
    for (size_t i = 0; i < bin.sections.size(); ++i) {
      if (bin.sections[i].id == 10) continue;  // contributions: not needed to prove
      std::vector<size_t> without;
      for (size_t j = 0; j < bin.sections.size(); ++j) {
        if (j != i) without.push_back(j);
      }
      expect_parse(FileKind::Zkey, rebuild(zkey, bin, without), CUZK_ERR_FORMAT, "missing",
                   n + "zkey without section " + std::to_string(bin.sections[i].id));
    }
    Bytes huge = zkey;
    put_u64(huge, bin.sections[0].header_offset + 4, ~uint64_t(0));
    expect_parse(FileKind::Zkey, huge, CUZK_ERR_FORMAT, "claims 18446744073709551615", n + "section size u64 max");
  }

  // wtns
  const uint64_t w1 = payload_of(wtns, kWtnsContainer, 1), w2 = payload_of(wtns, kWtnsContainer, 2);
  {
    Bytes m = wtns;
    put_u32(m, 4, 1);
    expect_parse(FileKind::Wtns, m, CUZK_OK, "", n + "wtns version 1");
    put_u32(m, 4, 3);
    expect_parse(FileKind::Wtns, m, CUZK_ERR_FORMAT, "version 3", n + "wtns version 3");
  }
  {
    Bytes m = wtns;
    std::copy(primes_of(f.curve).r, primes_of(f.curve).r + 32, m.begin() + w2 + 32);
    expect_parse(FileKind::Wtns, m, CUZK_ERR_FORMAT, "w[1]", n + "w[1] = prime");
  }
  {
    Bytes m = wtns;
    put_u32(m, w1, 8);
    expect_parse(FileKind::Wtns, m, CUZK_ERR_CURVE_MISMATCH, "8 bytes", n + "8-byte wtns");
    Bytes p = wtns;
    p[w1 + 4] ^= 0x10;
    expect_parse(FileKind::Wtns, p, CUZK_ERR_CURVE_MISMATCH, "-bit prime", n + "wtns foreign prime");
    Bytes c = wtns;
    put_u32(c, w1 + 36, load_u32_le(wtns.data() + w1 + 36) + 1);
    expect_parse(FileKind::Wtns, c, CUZK_ERR_FORMAT, "section 2", n + "n_witness + 1");
  }

  // r1cs
  const uint64_t r1 = payload_of(r1cs, kR1csContainer, 1);
  {
    BinFile bin;
    std::string err;
    parse_binfile(r1cs.data(), r1cs.size(), kR1csContainer, bin, err);
    Bytes m = r1cs;  // an empty custom-gates section 4 appended
    put_u32(m, 8, load_u32_le(r1cs.data() + 8) + 1);
    const uint8_t empty_section[12] = {4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    m.insert(m.end(), empty_section, empty_section + 12);
    expect_parse(FileKind::R1cs, m, CUZK_ERR_UNSUPPORTED, "custom gates", n + "r1cs with custom gates");
    std::vector<size_t> without_map;
    for (size_t i = 0; i < bin.sections.size(); ++i) {
      if (bin.sections[i].id != 3) without_map.push_back(i);
    }
    expect_parse(FileKind::R1cs, rebuild(r1cs, bin, without_map), CUZK_OK, "", n + "r1cs without its wire map");
  }
  {
    Bytes m = r1cs;
    put_u32(m, r1 + 36 + 24, load_u32_le(r1cs.data() + r1 + 36 + 24) - 1);  // one constraint fewer
    expect_parse(FileKind::R1cs, m, CUZK_ERR_FORMAT, "bytes of the constraints section follow",
                 n + "n_constraints - 1");
    Bytes w = r1cs;
    put_u32(w, r1 + 36, 1);  // n_wires = 1
    expect_parse(FileKind::R1cs, w, CUZK_ERR_FORMAT, "exceed", n + "n_wires = 1");
  }
  {
    R1cs parsed;
    std::string err;
    parse_r1cs(r1cs.data(), r1cs.size(), parsed, err);
    // The first term anywhere gets wire n_wires, then a value = prime.
    for (uint32_t c = 0; c < parsed.n_constraints; ++c) {
      const LinearCombination lc = parsed.lc(c, 0);
      if (lc.size() == 0) continue;
      const uint64_t at = uint64_t(lc.term(0).value - parsed.constraints) - 4 + (parsed.constraints - r1cs.data());
      Bytes m = r1cs;
      put_u32(m, at, parsed.n_wires);
      expect_parse(FileKind::R1cs, m, CUZK_ERR_FORMAT, "wire " + std::to_string(parsed.n_wires), n + "wire = n_wires");
      Bytes v = r1cs;
      std::copy(parsed.prime, parsed.prime + 32, v.begin() + at + 4);
      expect_parse(FileKind::R1cs, v, CUZK_ERR_FORMAT, "not below the prime", n + "r1cs value = prime");
      break;
    }
  }
}

void test_primes() {
  const uint8_t a[3] = {0xff, 0x00, 0x01}, b[3] = {0x00, 0x01, 0x01};
  expect(less_than_le(a, b, 3) && !less_than_le(b, a, 3) && !less_than_le(a, a, 3),
         "less_than_le orders by the top byte");
  expect(bit_length_le(kBn254R, 32) == 254 && bit_length_le(kBls12381R, 32) == 255 &&
             bit_length_le(kBls12381Q, 48) == 381 && bit_length_le(kBn254Q, 32) == 254,
         "prime bit lengths");
  expect(less_than_le(kBn254R, kBn254Q, 32), "BN254 r < q");
  expect(curve_by_scalar_prime(kBn254R, 32)->curve == CUZK_CURVE_BN254 &&
             curve_by_scalar_prime(kBls12381R, 32)->curve == CUZK_CURVE_BLS12_381 &&
             curve_by_scalar_prime(kBn254Q, 32) == nullptr,
         "curves by scalar prime");
  expect(curve_by_primes(kBn254Q, 32, kBls12381R, 32) == nullptr, "q and r must belong to the same curve");
}

void test_file_bytes(const fs::path& root) {
  std::string err;
  FileBytes f;
  expect_status(FileBytes::read("/nonexistent/cuzk.zkey", kZkeyContainer, f, err), CUZK_ERR_IO, err, "read a missing file");
  expect(err.find("/nonexistent/cuzk.zkey") != std::string::npos && err.find("No such file") != std::string::npos,
         "the message names the path and errno: " + err);
  expect_status(FileBytes::read(root.string(), kZkeyContainer, f, err), CUZK_ERR_IO, err, "read a directory");
  // Devices and FIFOs have no size to check first: refused at once, never read without end or waited on.
  expect_status(FileBytes::read("/dev/zero", kZkeyContainer, f, err), CUZK_ERR_IO, err, "read /dev/zero");
  expect(err.find("not a regular file") != std::string::npos, "/dev/zero: " + err);
  const fs::path fifo = fs::temp_directory_path() / ("cuzk_formats_fifo_" + std::to_string(::getpid()));
  if (::mkfifo(fifo.c_str(), 0600) == 0) {
    expect_status(FileBytes::read(fifo.string(), kZkeyContainer, f, err), CUZK_ERR_IO, err, "read a FIFO with no writer");
    fs::remove(fifo);
  }
  const fs::path empty = fs::temp_directory_path() / ("cuzk_formats_empty_" + std::to_string(::getpid()));
  std::ofstream(empty).close();
  expect_status(FileBytes::read(empty.string(), kZkeyContainer, f, err), CUZK_ERR_FORMAT, err, "read an empty file");
  fs::remove(empty);

  // A large file of something else is refused on its header, before any of it is held: 3 GiB of
  // zeros (sparse, no disk), then a right magic whose first section claims more than the file has.
  const fs::path zeros = fs::temp_directory_path() / ("cuzk_formats_zeros_" + std::to_string(::getpid()));
  {
    std::ofstream(zeros).close();
    fs::resize_file(zeros, uint64_t(3) << 30);
    struct rusage before, after;
    ::getrusage(RUSAGE_SELF, &before);
    expect_status(FileBytes::read(zeros.string(), kZkeyContainer, f, err), CUZK_ERR_FORMAT, err, "3 GiB of zeros as a key");
    expect(err.find("magic is 0x00000000") != std::string::npos, "the zeros' message names the magic: " + err);
    expect_status(FileBytes::read_sections(zeros.string(), kZkeyContainer, {5}, f, err), CUZK_ERR_FORMAT, err,
                  "3 GiB of zeros as a key, points on demand");
    expect_status(FileBytes::read(zeros.string(), kR1csContainer, f, err), CUZK_ERR_FORMAT, err, "3 GiB of zeros as a .r1cs");
    {
      std::fstream head(zeros, std::ios::in | std::ios::out | std::ios::binary);
      const uint8_t header[24] = {'z', 'k', 'e', 'y', 1, 0, 0, 0, 10, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
      head.write(reinterpret_cast<const char*>(header), sizeof header);
    }
    expect_status(FileBytes::read(zeros.string(), kZkeyContainer, f, err), CUZK_ERR_FORMAT, err,
                  "a zkey header whose section claims 2^56 bytes");
    expect(err.find("claims") != std::string::npos, "the oversized section is named: " + err);
    ::getrusage(RUSAGE_SELF, &after);
    expect(after.ru_maxrss - before.ru_maxrss < 10 * 1024, "refusing the 3 GiB files held no memory (max RSS grew " +
                                                               std::to_string(after.ru_maxrss - before.ru_maxrss) + " KiB)");
    fs::remove(zeros);
  }

  const fs::path some = root / "native/tests/data/bn254/witness.wtns";
  if (!fs::exists(some)) return;
  FileBytes a;
  expect_status(FileBytes::read(some.string(), kWtnsContainer, a, err), CUZK_OK, err, "read a wtns");
  const Bytes direct = read_file(some);
  expect(a.size() == direct.size() && std::memcmp(a.data(), direct.data(), a.size()) == 0, "read holds the file's bytes");
  FileBytes b(std::move(a));
  expect(a.data() == nullptr && a.size() == 0 && b.size() == direct.size(), "move construction transfers the bytes");
  FileBytes c;
  expect_status(FileBytes::copy(direct.data(), direct.size(), c, err), CUZK_OK, err, "copy caller memory");
  expect(c.data() != direct.data() && c.size() == direct.size() && std::memcmp(c.data(), direct.data(), c.size()) == 0,
         "copy owns an equal copy");
  c = std::move(b);  // frees the copy and takes the read bytes
  expect(c.size() == direct.size() && b.data() == nullptr, "move assignment transfers the bytes");
}

}  // namespace

int main(int argc, char** argv) {
  const char* root_env = std::getenv("CUZK_REPO_ROOT");
  const fs::path root = argc > 1 ? fs::path(argv[1]) : root_env ? fs::path(root_env) : fs::current_path();
  const char* seed_env = std::getenv("CUZK_FUZZ_SEED");
  const char* scale_env = std::getenv("CUZK_FUZZ_SCALE");
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 0) : 0x5eedc0de;
  const int scale = scale_env ? std::max(1, std::atoi(scale_env)) : 1;

  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // progress lines show up as they happen
  test_primes();
  test_file_bytes(root);

  const std::vector<Fixture> fixtures = find_fixtures(root);
  expect(!fixtures.empty(), "fixtures found under " + root.string() + " (run from the repo root)");
  std::mt19937_64 rng(seed);
  for (const Fixture& f : fixtures) {
    test_fixture(f);
    test_section_orders(f);
    test_targeted(f);
    std::vector<std::pair<FileKind, fs::path>> files;
    for (const fs::path& z : f.zkeys) files.push_back({FileKind::Zkey, z});
    files.push_back({FileKind::R1cs, f.dir / "circuit.r1cs"});
    files.push_back({FileKind::Wtns, f.dir / "witness.wtns"});
    for (const auto& [kind, path] : files) {
      if (fs::file_size(path) > (1u << 20)) {
        std::printf("  %s/%s: too large to mutate (> 1 MiB), parsed only\n", f.name.c_str(),
                    path.filename().string().c_str());
        continue;
      }
      const std::string label = f.name + "/" + path.filename().string();
      const MutationStats s = mutate_file(kind, read_file(path), label, rng, scale);
      std::printf("  %-40s %7zu bytes  %6llu mutants  %6llu rejected  %5llu accepted\n", label.c_str(),
                  size_t(fs::file_size(path)), (unsigned long long)s.tried, (unsigned long long)s.rejected,
                  (unsigned long long)s.accepted);
      g_total.tried += s.tried;
      g_total.rejected += s.rejected;
      g_total.accepted += s.accepted;
      for (const auto& [status, count] : s.by_status) g_total.by_status[status] += count;
    }
  }
  std::printf("mutants: %llu tried, %llu rejected, %llu accepted (structurally valid); by status:",
              (unsigned long long)g_total.tried, (unsigned long long)g_total.rejected,
              (unsigned long long)g_total.accepted);
  for (const auto& [status, count] : g_total.by_status) std::printf(" %d=%llu", status, (unsigned long long)count);
  std::printf("\n%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
