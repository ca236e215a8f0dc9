// The whole bytes of an input file (or of caller memory), held in memory the library owns. The
// readers take pointers into it, so it must outlive what they parse. Owning them is what makes a
// key safe for as long as it is open: a file truncated or rewritten in place after open, or a
// caller's buffer freed, cannot change or fault what the prover reads (an mmap would SIGBUS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "formats/status.hpp"

namespace cuzk::formats {

class FileBytes {
 public:
  FileBytes() = default;
  ~FileBytes();
  FileBytes(FileBytes&& other) noexcept;
  FileBytes& operator=(FileBytes&& other) noexcept;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  // Reads the regular file at `path` whole, in large sequential reads into huge-page-backed memory.
  // The size is taken (and checked) before anything is read: CUZK_ERR_IO (path and errno text) when
  // it cannot be opened or read, is not a regular file (a directory, FIFO or device such as
  // /dev/zero is refused without reading or blocking), or changes size while being read;
  // CUZK_ERR_FORMAT when it is empty; CUZK_ERR_OUT_OF_MEMORY when it is larger than this machine's
  // memory or the memory cannot be had.
  static Status read(const std::string& path, FileBytes& out, std::string& err);

  // A copy of caller memory (len > 0). CUZK_ERR_OUT_OF_MEMORY as for read().
  static Status copy(const uint8_t* data, size_t len, FileBytes& out, std::string& err);

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Status allocate(size_t size, std::string& err);
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes of the anonymous mapping behind data_
};

}  // namespace cuzk::formats
