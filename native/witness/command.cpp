// The per-circuit witness executable that `cuzk witness compile` links beside the library, for
// circom's C++ flow without a JavaScript runtime (what rapidsnark users run):
//
//   <name>.witness <input.json | -> <output.wtns>
//
// Reads the inputs (input_json.hpp: as circom_runtime reads them), computes the witness through the
// library's own entry points (cuzk_witness.h: the same checks, the same bytes) and writes the
// snarkjs .wtns file (version 2: a header section with r and the witness length, then the values).
// Exit status 0; 1 for any error, one line "<program>: <message>" on stderr and no output file
// written; 2 for a command line it cannot use.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "cuzk_witness.h"
#include "input_json.hpp"

namespace {

// The input file's bound: far above any circuit's inputs in JSON, far below the host's memory.
constexpr size_t kMaxInputBytes = size_t(1) << 30;

const char* program = "witness";

struct Failure {
  std::string message;
};

std::string os_error(const std::string& what, const std::string& path) { return what + " " + path + ": " + std::strerror(errno); }

std::string read_input(const std::string& path) {
  const bool from_stdin = path == "-";
  const int fd = from_stdin ? 0 : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Failure{os_error("cannot open", path)};
  struct stat st;
  if (fstat(fd, &st) != 0) throw Failure{os_error("cannot stat", path)};
  if (!from_stdin && !S_ISREG(st.st_mode)) throw Failure{path + " is not a regular file"};
  if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > kMaxInputBytes) {
    throw Failure{path + " holds " + std::to_string((long long)st.st_size) + " bytes; inputs are read up to " + std::to_string(kMaxInputBytes)};
  }
  std::string text;
  if (S_ISREG(st.st_mode)) text.reserve((size_t)st.st_size);
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Failure{os_error("cannot read", path)};
    if (n == 0) break;
    if (text.size() + (size_t)n > kMaxInputBytes) throw Failure{path + " goes on past " + std::to_string(kMaxInputBytes) + " bytes; inputs are read up to that"};
    text.append(buffer, (size_t)n);
  }
  if (!from_stdin) close(fd);
  return text;
}

void check(cuzk_status status, const char* err) {
  if (status != CUZK_OK) throw Failure{err[0] ? err : "the witness library failed without a message"};
}

// Writes every byte of the pieces, or says why not (the partial file is removed).
void write_wtns(const std::string& path, std::vector<iovec> pieces) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Failure{os_error("cannot create", path)};
  size_t first = 0;
  while (first < pieces.size()) {
    const ssize_t n = writev(fd, pieces.data() + first, (int)(pieces.size() - first));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string message = os_error("cannot write", path);
      close(fd);
      unlink(path.c_str());
      throw Failure{message};
    }
    for (size_t left = (size_t)n; left > 0;) {
      if (pieces[first].iov_len <= left) {
        left -= pieces[first].iov_len;
        first++;
      } else {
        pieces[first].iov_base = (char*)pieces[first].iov_base + left;
        pieces[first].iov_len -= left;
        left = 0;
      }
    }
    while (first < pieces.size() && pieces[first].iov_len == 0) first++;
  }
  if (close(fd) != 0) {
    const std::string message = os_error("cannot write", path);
    unlink(path.c_str());
    throw Failure{message};
  }
}

void put32(uint8_t* at, uint32_t v) { std::memcpy(at, &v, 4); }
void put64(uint8_t* at, uint64_t v) { std::memcpy(at, &v, 8); }

void run(const std::string& input_path, const std::string& output_path) {
  char err[1024];
  cuzk_witness_info info{};
  info.struct_size = sizeof info;
  check(cuzk_witness_info_get(&info, err, sizeof err), err);
  std::vector<uint64_t> hashes(info.n_inputs), sizes(info.n_inputs);
  size_t count = 0;
  check(cuzk_witness_inputs(hashes.data(), sizes.data(), hashes.size(), &count, err, sizeof err), err);
  std::unordered_map<uint64_t, uint64_t> size_of;
  for (size_t i = 0; i < count; i++) size_of[hashes[i]] = sizes[i];

  const std::string text = read_input(input_path);
  cuzk::witness::EncodedInputs inputs;
  try {
    inputs = cuzk::witness::parse_input_json(text.data(), text.size(), size_of, info.n_input_values);
  } catch (const cuzk::witness::InputError& e) {
    throw Failure{e.message};
  }
  if (info.n_vars > UINT32_MAX) throw Failure{"the witness has more values than a .wtns header can count"};

  // The .wtns layout (snarkjs's, and src/witness/library.ts's wtns()): magic, version 2, 2
  // sections; section 1 (40 bytes): n8 = 32, r, the witness length; section 2: the values.
  uint8_t header[12 + 12 + 4 + 32 + 4 + 12] = {'w', 't', 'n', 's'};
  put32(header + 4, 2);
  put32(header + 8, 2);
  put32(header + 12, 1);
  put64(header + 16, 40);
  put32(header + 24, 32);
  std::memcpy(header + 28, info.prime, 32);
  put32(header + 60, (uint32_t)info.n_vars);
  put32(header + 64, 2);
  const size_t bytes = (size_t)info.n_vars * 32;
  put64(header + 68, bytes);
  std::vector<uint8_t> values;
  try {
    values.resize(bytes);
  } catch (const std::bad_alloc&) {
    throw Failure{"out of host memory: the witness needs " + std::to_string(bytes) + " bytes"};
  }
  check(cuzk_witness_compute(inputs.hashes.data(), inputs.hashes.size(), inputs.values.data(), inputs.value_count, values.data(),
                             values.size(), err, sizeof err),
        err);
  write_wtns(output_path, {{header, sizeof header}, {values.data(), values.size()}});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 0) {
    const char* slash = std::strrchr(argv[0], '/');
    program = slash ? slash + 1 : argv[0];
  }
  if (argc == 2 && (std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0)) {
    std::printf("usage: %s <input.json | -> <output.wtns>\n", program);
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s <input.json | -> <output.wtns>\n", program);
    return 2;
  }
  try {
    run(argv[1], argv[2]);
    return 0;
  } catch (const Failure& f) {
    std::fprintf(stderr, "%s: %s\n", program, f.message.c_str());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: out of host memory\n", program);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", program, e.what());
  }
  return 1;
}
