// An open key owns its bytes: the caller's buffer given to cuzk_key_open_memory may be overwritten
// and freed, and a key or .r1cs file truncated or rewritten in place after open, and the next
// proofs are still right (an mmap or a borrowed view would fault or read garbage). Inputs that are
// not regular files (/dev/zero, a FIFO, a directory) are refused with CUZK_ERR_IO without reading.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "check.hpp"
#include "fixture.hpp"
#include "cuzk.h"
#include "prove_call.hpp"
#include "formats/wtns.hpp"

namespace fs = std::filesystem;

namespace {

using Bytes = std::vector<uint8_t>;

using cuzk_test::read_file;

void write_file(const fs::path& path, const Bytes& b) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(b.data()), (std::streamsize)b.size());
}

// Rewrites the file in place (same inode): zeros over the first half, then truncation to 100 bytes.
void damage_in_place(const fs::path& path) {
  const auto size = fs::file_size(path);
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    Bytes zeros(size / 2, 0);
    f.write(reinterpret_cast<const char*>(zeros.data()), (std::streamsize)zeros.size());
  }
  fs::resize_file(path, 100);
}

// Proves the fixture's witness with `key` (with the default self-check) and checks the proof
// against an independent verification of the vk exported at the start.
bool proves(cuzk_key* key, const Bytes& vk, const std::string& dir) {
  char err[512];
  cuzk_key_info info{};
  cuzk_key_get_info(key, &info, err, sizeof err);
  cuzk_context* ctx = nullptr;
  cuzk_prover* prover = nullptr;
  bool ok = cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) == CUZK_OK &&
            cuzk_prover_create(ctx, key, 0, &prover, nullptr, err, sizeof err) == CUZK_OK;
  const Bytes wtns = read_file(dir + "/witness.wtns");
  Bytes proof(info.proof_bytes);
  ok = ok && prove_call(prover, wtns.data(), wtns.size(), CUZK_WITNESS_WTNS, 1, nullptr, nullptr, 0, proof.data(),
                        proof.size(), nullptr, nullptr, err, sizeof err) == CUZK_OK;
  if (!ok) std::fprintf(stderr, "  prove: %s\n", err);
  cuzk::formats::Wtns w;
  std::string e;
  cuzk::formats::parse_wtns(wtns.data(), wtns.size(), w, e);
  int32_t valid = 0;
  ok = ok && cuzk_verify(info.curve, vk.data(), vk.size(), proof.data(), proof.size(), w.values + 32, info.n_public,
                         &valid, err, sizeof err) == CUZK_OK && valid == 1;
  cuzk_prover_destroy(prover, nullptr, 0);
  cuzk_context_destroy(ctx, nullptr, 0);
  return ok;
}

Bytes export_vk(cuzk_key* key) {
  size_t len = 0;
  cuzk_key_export_vk(key, nullptr, 0, &len, nullptr, 0);
  Bytes vk(len);
  cuzk_key_export_vk(key, vk.data(), vk.size(), &len, nullptr, 0);
  return vk;
}

void memory_is_copied(const std::string& dir) {
  char err[512];
  auto* bytes = new Bytes(read_file(dir + "/circuit.zkey"));
  cuzk_key* key = nullptr;
  CHECK(cuzk_key_open_memory(bytes->data(), bytes->size(), 0, &key, err, sizeof err) == CUZK_OK);
  const Bytes vk = export_vk(key);
  std::memset(bytes->data(), 0x5a, bytes->size());  // the caller reuses its buffer...
  delete bytes;                                     // ...and frees it
  CHECK(proves(key, vk, dir));
  CHECK(proves(key, vk, dir));
  cuzk_key_close(key, nullptr, 0);
}

void files_are_read_whole(const std::string& dir, const fs::path& tmp) {
  char err[512];
  const fs::path zkey = tmp / "circuit.zkey", r1cs = tmp / "circuit.r1cs";
  write_file(zkey, read_file(dir + "/circuit.zkey"));
  write_file(r1cs, read_file(dir + "/circuit.r1cs"));
  cuzk_key* key = nullptr;
  CHECK(cuzk_key_open(zkey.c_str(), 0, &key, err, sizeof err) == CUZK_OK);
  CHECK(cuzk_key_attach_r1cs(key, r1cs.c_str(), err, sizeof err) == CUZK_OK);
  const Bytes vk = export_vk(key);
  damage_in_place(zkey);
  damage_in_place(r1cs);
  CHECK(proves(key, vk, dir));  // with the .r1cs check, which reads the attached circuit
  cuzk_key_info info{};
  CHECK(cuzk_key_get_info(key, &info, err, sizeof err) == CUZK_OK && info.has_r1cs == 1);
  CHECK(info.file_bytes == fs::file_size(dir + "/circuit.zkey"));
  cuzk_key_close(key, nullptr, 0);
  // The damaged file itself is now refused at open.
  CHECK(cuzk_key_open(zkey.c_str(), 0, &key, err, sizeof err) == CUZK_ERR_FORMAT);
}

void not_regular_files(const fs::path& tmp, const std::string& dir) {
  char err[512];
  const fs::path fifo = tmp / "fifo";
  CHECK(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo.string(), tmp.string()}) {
    cuzk_key* key = nullptr;
    CHECK(cuzk_key_open(path.c_str(), 0, &key, err, sizeof err) == CUZK_ERR_IO);
    CHECK(key == nullptr && std::strstr(err, path.c_str()) != nullptr);
    CHECK(cuzk_setup_insecure_dev(path.c_str(), (tmp / "never.zkey").c_str(), 0, CUZK_SETUP_CPU_ONLY, nullptr, nullptr, err,
                                  sizeof err) == CUZK_ERR_IO);
  }
  cuzk_key* key = nullptr;
  CHECK(cuzk_key_open((dir + "/circuit.zkey").c_str(), 0, &key, err, sizeof err) == CUZK_OK);
  for (const std::string& path : {std::string("/dev/zero"), fifo.string(), tmp.string()})
    CHECK(cuzk_key_attach_r1cs(key, path.c_str(), err, sizeof err) == CUZK_ERR_IO);
  cuzk_key_close(key, nullptr, 0);
}

}  // namespace

int main() {
  const cuzk_test::ScratchDir scratch("cuzk_key_source_");
  const fs::path tmp = scratch.path();
  alarm(120);  // a read that blocks (a FIFO) or never ends (/dev/zero) fails the test instead of hanging it
  for (const char* dir : {"tests/fixtures/bn254/mulchain_8", "tests/fixtures/bls12_381/mulchain_8"}) {
    memory_is_copied(dir);
    files_are_read_whole(dir, tmp);
    not_regular_files(tmp, dir);
    fs::remove(tmp / "fifo");
  }
  return cuzk_test::finish("key_source_test");
}
