// The key view's rows (A and B in compressed-row form) against a reference made here from the
// coefficient records directly: for a key whose records come in row order (the parallel path, in
// several chunks), for the same key with records moved out of order (the counting sort), on pools
// of 1 and 2 threads, both curves. Each row's terms must be the records of that row in file order.
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixture.hpp"
#include "cuzk.h"
#include "curve/curves.hpp"
#include "engine/key_view.hpp"
#include "formats/zkey.hpp"
#include "util/thread_pool.hpp"

namespace {

using Bytes = std::vector<uint8_t>;

// Row r's (signal, value bytes) of matrix m, in record order: what the view must hold.
struct Reference {
  std::vector<std::vector<std::pair<uint32_t, const uint8_t*>>> rows;
};

Reference reference(const cuzk::formats::ZkeyGroth16& z, uint32_t matrix, uint32_t n_rows) {
  Reference ref;
  ref.rows.resize(n_rows);
  for (uint32_t i = 0; i < z.n_coefs; i++) {
    auto c = z.coef(i);
    if (c.matrix == matrix) ref.rows[c.constraint].push_back({c.signal, c.value});
  }
  return ref;
}

template <class C>
bool same_rows(const cuzk::engine::SparseRows<typename C::Fr>& rows, const Reference& ref) {
  if (rows.rows() != ref.rows.size()) return false;
  for (size_t r = 0; r < ref.rows.size(); r++) {
    const uint64_t lo = rows.row_start[r], hi = rows.row_start[r + 1];
    if (hi - lo != ref.rows[r].size()) return false;
    for (uint64_t k = lo; k < hi; k++) {
      const auto& [signal, value] = ref.rows[r][k - lo];
      if (rows.signal[k] != signal) return false;
      if (std::memcmp(rows.coef[k].l, value, 32) != 0) return false;  // raw limbs = the stored bytes
    }
  }
  return true;
}

// The distinct A and B coefficient values of a view, counted the plain way.
template <class C>
size_t distinct_coefs(const cuzk::engine::KeyView<C>& view) {
  std::set<std::vector<uint64_t>> seen;
  for (const auto* m : {&view.a, &view.b})
    for (const auto& c : m->coef) seen.insert(std::vector<uint64_t>(std::begin(c.l), std::end(c.l)));
  return seen.size();
}

template <class C>
void check_view(const Bytes& key, const char* label) {
  cuzk::formats::ZkeyGroth16 z;
  std::string err;
  CHECK(cuzk::formats::parse_zkey(key.data(), key.size(), z, err) == CUZK_OK);
  const uint32_t n_rows = z.n_constraints + z.n_public + 1;
  const Reference a = reference(z, 0, n_rows), b = reference(z, 1, n_rows);
  for (unsigned threads : {1u, 2u}) {
    cuzk::ThreadPool pool(threads);
    cuzk::engine::KeyView<C> view;
    CHECK(view.build(z, pool, err) == CUZK_OK);
    const bool ok = same_rows<C>(view.a, a) && same_rows<C>(view.b, b);
    CHECK(ok);
    // The coefficient table: every coefficient is its table entry, the entries are distinct.
    cuzk::engine::CoefTable<typename C::Fr> table;
    table.build(view.a, view.b, pool);
    bool table_ok = table.fits == (distinct_coefs<C>(view) <= table.kMaxEntries);
    if (table.fits) {
      table_ok = table_ok && table.values.size() == distinct_coefs<C>(view) &&
                 table.index_a.size() == view.a.coef.size() && table.index_b.size() == view.b.coef.size();
      for (size_t k = 0; table_ok && k < view.a.coef.size(); k++) table_ok = table.values[table.index_a[k]] == view.a.coef[k];
      for (size_t k = 0; table_ok && k < view.b.coef.size(); k++) table_ok = table.values[table.index_b[k]] == view.b.coef[k];
    }
    CHECK(table_ok);
    std::printf("%s, %u thread(s): %u records, rows %s; coefficient table: %s\n", label, threads, z.n_coefs,
                ok ? "equal to the reference" : "DIFFER",
                !table_ok ? "WRONG" : table.fits ? (std::to_string(table.values.size()) + " values").c_str() : "too many values");
  }
}

// A key of a porep circuit: its records in row order as the setup writes them.
Bytes porep_key(const std::string& dir, uint32_t curve, uint32_t n) {
  char err[512];
  const std::string r1cs = dir + "/k.r1cs", wtns = dir + "/k.wtns", zkey = dir + "/k.zkey";
  CHECK(cuzk_synth_circuit_write(curve, CUZK_SYNTH_POREP, n, 3, 8, r1cs.c_str(), wtns.c_str(), err, sizeof err) == CUZK_OK);
  CHECK(cuzk_setup_insecure_dev(r1cs.c_str(), zkey.c_str(), 0, CUZK_SETUP_CPU_ONLY, nullptr, nullptr, err, sizeof err) ==
        CUZK_OK);
  return cuzk_test::read_file(zkey);
}

// The same key with records swapped so that rows come out of order (a valid key all the same).
Bytes out_of_order(Bytes key) {
  cuzk::formats::ZkeyGroth16 z;
  std::string err;
  if (cuzk::formats::parse_zkey(key.data(), key.size(), z, err) != CUZK_OK) return {};
  const uint64_t rec = z.coef_record_bytes();
  uint8_t* first = key.data() + (z.coefs - key.data());
  for (uint64_t i = 0; i + 7 < z.n_coefs / 2; i += 997) {  // swap record i with one far ahead
    std::vector<uint8_t> tmp(first + i * rec, first + (i + 1) * rec);
    const uint64_t j = z.n_coefs - 1 - i;
    std::memcpy(first + i * rec, first + j * rec, rec);
    std::memcpy(first + j * rec, tmp.data(), rec);
  }
  return key;
}

}  // namespace

int main() {
  cuzk_test::ScratchDir dir("cuzk_key_view_");
  // 2^16 rows: ~220k records, several chunks of the parallel path.
  const Bytes bn = porep_key(dir.path(), CUZK_CURVE_BN254, (1u << 16) - 16);
  check_view<cuzk::curve::Bn254>(bn, "bn254 porep 2^16, in row order");
  check_view<cuzk::curve::Bn254>(out_of_order(bn), "bn254 porep 2^16, out of order");
  const Bytes bls = porep_key(dir.path(), CUZK_CURVE_BLS12_381, 5000);
  check_view<cuzk::curve::Bls12381>(bls, "bls12_381 porep 5000, in row order");
  check_view<cuzk::curve::Bls12381>(out_of_order(bls), "bls12_381 porep 5000, out of order");
  // A uniform-profile key has a random coefficient per term: too many values for a table.
  {
    char err[512];
    const std::string r1cs = dir.path() + "/u.r1cs", wtns = dir.path() + "/u.wtns", zkey = dir.path() + "/u.zkey";
    CHECK(cuzk_synth_circuit_write(CUZK_CURVE_BN254, CUZK_SYNTH_UNIFORM, 20000, 2, 8, r1cs.c_str(), wtns.c_str(), err,
                                   sizeof err) == CUZK_OK);
    CHECK(cuzk_setup_insecure_dev(r1cs.c_str(), zkey.c_str(), 0, CUZK_SETUP_CPU_ONLY, nullptr, nullptr, err,
                                  sizeof err) == CUZK_OK);
    check_view<cuzk::curve::Bn254>(cuzk_test::read_file(zkey), "bn254 uniform 20000");
  }
  // The committed fixtures (snarkjs's keys).
  for (const char* name : {"bn254/poseidon_10", "bls12_381/mulchain_10", "bn254/many_public"}) {
    const Bytes key = cuzk_test::read_file(std::string("tests/fixtures/") + name + "/circuit.zkey");
    if (std::strncmp(name, "bn254", 5) == 0) check_view<cuzk::curve::Bn254>(key, name);
    else check_view<cuzk::curve::Bls12381>(key, name);
  }
  return cuzk_test::finish("key_view_test");
}
