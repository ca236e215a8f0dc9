// The OS CSPRNG (getrandom): the library's one source of secret randomness, i.e. the blinding
// scalars r, s of every proof and the toxic waste of the insecure development setup.
#pragma once

#include <sys/random.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace cuzk {

// Fills n bytes; false (with the errno text in err) only when the kernel refuses.
inline bool os_random(void* out, size_t n, std::string& err) {
  auto* p = static_cast<uint8_t*>(out);
  while (n > 0) {
    ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      err = std::string("getrandom failed: ") + std::strerror(errno);
      return false;
    }
    p += got;
    n -= (size_t)got;
  }
  return true;
}

}  // namespace cuzk
