// A read-only view of a whole file (mmap) or of borrowed memory. The readers take pointers into
// it, so proving keys of many GiB are used in place and only the pages touched are read.
// A file shrunk by another process while mapped makes later reads fault (SIGBUS): the price of
// not copying. Keys are expected to be immutable while open.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/status.hpp"

namespace cuzk::formats {

class MappedFile {
 public:
  // How the pages will be read: a hint to the kernel (madvise), never required for correctness.
  enum class Advice { Normal, Sequential, WillNeed };

  MappedFile() = default;
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps `path` read-only (MAP_PRIVATE). CUZK_ERR_IO (with the path and errno text) when it cannot be
  // opened, is not a regular file or cannot be mapped; CUZK_ERR_FORMAT when it is empty.
  static Status open(const std::string& path, MappedFile& out, std::string& err, Advice advice = Advice::Normal);

  // Wraps memory the caller owns and keeps alive; nothing is freed on destruction.
  static MappedFile borrow(const uint8_t* data, size_t size);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool is_mapped() const { return mapped_; }

 private:
  void release();

  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;  // true: we own an mmap of size_ bytes and must munmap it
};

}  // namespace cuzk::formats
