// A Groth16 proving key (.zkey, snarkjs; formats.md 1), checked and used in place: every pointer
// below points into the caller's bytes (a FileBytes), which must outlive this struct.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cuzk.h"
#include "formats/byte_reader.hpp"
#include "formats/file_bytes.hpp"
#include "formats/status.hpp"

namespace cuzk::formats {

// The point sections a proof sums over, in file order: .zkey sections 5..9 (kFirstPointSectionId + s).
enum PointSection : int { kSecA = 0, kSecB1, kSecB2, kSecC, kSecH, kPointSections };
constexpr uint32_t kFirstPointSectionId = 5;

// One record of the coefficient section. value: n8r bytes LE, v*R^2 mod r (formats.md 1).
struct ZkeyCoef {
  uint32_t matrix;  // 0 = A, 1 = B
  uint32_t constraint;
  uint32_t signal;
  const uint8_t* value;
};

// Where the point sections of a key that does not hold them in memory are read from: its file
// (CUZK_KEY_POINTS_ON_DEMAND: FilePoints below) or a generator (the insecure development key made
// in memory, setup/dev_key.hpp). read() may be called from one thread at a time.
class PointSource {
 public:
  virtual ~PointSource() = default;
  // dst <- points [first, first + count) of section s, key encoding (the caller checked the range).
  virtual Status read(PointSection s, uint64_t first, uint64_t count, uint8_t* dst, std::string& err) const = 0;
  // marks[k] <- 1 where point first + k of section s is not infinity, 0 where it is, when the
  // source knows that without making the points (a generator: the point's scalar is zero). false:
  // it cannot say, and the caller reads the points to find out.
  virtual bool finite_marks(PointSection s, uint64_t first, uint64_t count, uint8_t* marks) const {
    (void)s, (void)first, (void)count, (void)marks;
    return false;
  }
  // About how fast read() delivers points (bytes a second), for the memory plan's choice between
  // reading a streamed section from here per group and pinning a copy of it once.
  virtual double read_bytes_per_s() const = 0;
};

struct ZkeyGroth16 {
  cuzk_curve curve = CUZK_CURVE_BN254;
  uint32_t n8q = 0;  // bytes per base-field coordinate: 32 or 48
  uint32_t n8r = 0;  // bytes per scalar: 32
  const uint8_t* q = nullptr;  // n8q bytes LE
  const uint8_t* r = nullptr;  // n8r bytes LE
  uint32_t n_vars = 0;         // witness length, w[0] = 1 included
  uint32_t n_public = 0;       // outputs + public inputs, w[1..n_public]
  uint32_t domain_size = 0;    // power of two >= n_constraints + n_public + 1
  uint32_t log_domain = 0;
  uint32_t n_constraints = 0;  // derived from the input rows of the coefficient section

  // Points in key encoding (affine, Montgomery LE, G2 as x.c0 x.c1 y.c0 y.c1; zero = infinity).
  const uint8_t* alpha1 = nullptr;  // G1
  const uint8_t* beta1 = nullptr;   // G1
  const uint8_t* beta2 = nullptr;   // G2
  const uint8_t* gamma2 = nullptr;  // G2
  const uint8_t* delta1 = nullptr;  // G1
  const uint8_t* delta2 = nullptr;  // G2
  const uint8_t* ic = nullptr;         // n_public + 1 G1
  const uint8_t* points_a = nullptr;   // n_vars G1
  const uint8_t* points_b1 = nullptr;  // n_vars G1
  const uint8_t* points_b2 = nullptr;  // n_vars G2
  const uint8_t* points_c = nullptr;   // n_private() G1: entry i belongs to signal n_public + 1 + i
  const uint8_t* points_h = nullptr;   // domain_size G1

  const uint8_t* coefs = nullptr;  // first record (after the u32 count)
  uint32_t n_coefs = 0;

  // Where each point section's payload starts, from the start of the key's bytes (PointSection).
  uint64_t points_offset[kPointSections] = {};
  // A key whose point sections are not in memory (the five pointers above are NULL): where they
  // are read from. NULL otherwise.
  const PointSource* source = nullptr;

  uint64_t g1_bytes() const { return 2ull * n8q; }
  uint64_t g2_bytes() const { return 4ull * n8q; }
  uint64_t coef_record_bytes() const { return 12ull + n8r; }
  uint32_t n_private() const { return n_vars - n_public - 1; }
  // The in-memory bytes of a point section, or NULL when it stays in the file.
  const uint8_t* points(PointSection s) const {
    const uint8_t* p[kPointSections] = {points_a, points_b1, points_b2, points_c, points_h};
    return p[s];
  }
  uint64_t point_count(PointSection s) const {
    return s == kSecC ? n_private() : s == kSecH ? domain_size : n_vars;
  }
  uint64_t point_bytes(PointSection s) const { return s == kSecB2 ? g2_bytes() : g1_bytes(); }

  ZkeyCoef coef(uint32_t i) const {
    const uint8_t* p = coefs + static_cast<uint64_t>(i) * coef_record_bytes();
    return ZkeyCoef{load_u32_le(p), load_u32_le(p + 4), load_u32_le(p + 8), p + 12};
  }
};

// The point sections of a key opened with CUZK_KEY_POINTS_ON_DEMAND: read from its file at the
// offsets the parse found. The FileBytes (read_sections) and the key must outlive it.
class FilePoints final : public PointSource {
 public:
  FilePoints(const FileBytes& file, const ZkeyGroth16& key) : file_(file), key_(key) {}
  Status read(PointSection s, uint64_t first, uint64_t count, uint8_t* dst, std::string& err) const override {
    const uint64_t pb = key_.point_bytes(s);
    return file_.read_at(key_.points_offset[s] + first * pb, count * pb, dst, err);
  }
  double read_bytes_per_s() const override { return 2e9; }  // a local disk, or the page cache

 private:
  const FileBytes& file_;
  const ZkeyGroth16& key_;
};

// Checks a whole .zkey: container, protocol (Groth16 only: others CUZK_ERR_UNSUPPORTED), curve
// (BN254 or BLS12-381 by q and r: others CUZK_ERR_CURVE_MISMATCH), every section size against the
// counts, every coefficient record, the snarkjs input rows, header and IC coordinates < q.
// Points are not checked to be on the curve. Anything else malformed: CUZK_ERR_FORMAT.
Status parse_zkey(const uint8_t* data, size_t size, ZkeyGroth16& out, std::string& err);

}  // namespace cuzk::formats
