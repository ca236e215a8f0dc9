// What the end-to-end native tests share: a file read whole, a scratch directory, and a key opened
// through the C ABI with a CPU prover over it and its exported verification key, so that each test
// proves and verifies the same way.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cuzk.h"

namespace cuzk_test {

// The whole file at `path`; empty when it cannot be read (the test's next check fails on that).
inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// A fresh directory for a test's files (mkdtemp in the system's temporary directory), removed with
// everything in it at the end of the scope. A test that cannot have one exits at once (status 1):
// nothing it would check could run.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix) {
    std::error_code ec;
    std::string name = (std::filesystem::temp_directory_path(ec) / (prefix + "XXXXXX")).string();
    if (ec || !mkdtemp(name.data())) {
      std::fprintf(stderr, "FAIL: cannot make a scratch directory %s\n", name.c_str());
      std::exit(1);
    }
    path_ = name;
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A key, a CPU context, a prover over both and the key's vk, released in reverse order at the end
// of the scope. open*() return false on the first refused call, with its message in err.
struct CpuProver {
  cuzk_key* key = nullptr;
  cuzk_context* ctx = nullptr;
  cuzk_prover* prover = nullptr;
  cuzk_key_info info{};
  std::vector<uint8_t> vk;
  char err[512] = {0};

  CpuProver() = default;
  CpuProver(const CpuProver&) = delete;
  CpuProver& operator=(const CpuProver&) = delete;
  ~CpuProver() {
    cuzk_prover_destroy(prover, nullptr, 0);
    cuzk_context_destroy(ctx, nullptr, 0);
    cuzk_key_close(key, nullptr, 0);
  }

  // The .zkey at zkey_path; with r1cs_path, that .r1cs attached. `upload` is cuzk_prover_create's.
  bool open(const std::string& zkey_path, const std::string& r1cs_path = "", cuzk_progress* upload = nullptr) {
    if (cuzk_key_open(zkey_path.c_str(), 0, &key, err, sizeof err) != CUZK_OK) return false;
    return finish(r1cs_path, upload);
  }
  // The same from .zkey bytes in memory.
  bool open_memory(const std::vector<uint8_t>& zkey, const std::string& r1cs_path = "") {
    if (cuzk_key_open_memory(zkey.data(), zkey.size(), 0, &key, err, sizeof err) != CUZK_OK) return false;
    return finish(r1cs_path, nullptr);
  }

  // cuzk_verify of one proof against the key's vk and info.n_public signals.
  bool verify(const uint8_t* proof, const uint8_t* public_signals) {
    int32_t valid = -1;
    cuzk_status st = cuzk_verify(info.curve, vk.data(), vk.size(), proof, info.proof_bytes, public_signals, info.n_public,
                                 &valid, err, sizeof err);
    return st == CUZK_OK && valid == 1;
  }

 private:
  bool finish(const std::string& r1cs_path, cuzk_progress* upload) {
    if (cuzk_key_get_info(key, &info, err, sizeof err) != CUZK_OK) return false;
    if (!r1cs_path.empty() && cuzk_key_attach_r1cs(key, r1cs_path.c_str(), err, sizeof err) != CUZK_OK) return false;
    size_t len = 0;
    cuzk_key_export_vk(key, nullptr, 0, &len, nullptr, 0);
    vk.resize(len);
    if (cuzk_key_export_vk(key, vk.data(), vk.size(), &len, err, sizeof err) != CUZK_OK) return false;
    if (cuzk_context_create(CUZK_BACKEND_CPU, 0, 0, 0, &ctx, err, sizeof err) != CUZK_OK) return false;
    return cuzk_prover_create(ctx, key, 0, &prover, upload, err, sizeof err) == CUZK_OK;
  }
};

}  // namespace cuzk_test
