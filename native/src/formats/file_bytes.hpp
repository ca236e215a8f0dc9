// The whole bytes of an input file (or of caller memory), held in memory the library owns. The
// readers take pointers into it, so it must outlive what they parse. Owning them is what makes a
// key safe for as long as it is open: a file truncated or rewritten in place after open, or a
// caller's buffer freed, cannot change or fault what the prover reads (an mmap would SIGBUS).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "formats/binfile.hpp"
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

  // Reads the regular file at `path`, a container of `kind`, whole, in large sequential reads into
  // huge-page-backed memory. The size is taken (and checked) before anything is read: CUZK_ERR_IO
  // (path and errno text) when it cannot be opened or read, is not a regular file (a directory,
  // FIFO or device such as /dev/zero is refused without reading or blocking), or changes size while
  // being read; CUZK_ERR_FORMAT when it is empty or its header and section table (read first, a few
  // bytes each: probe_binfile) are not those of a `kind` container of its size, so that a large file
  // of something else costs neither memory nor time; CUZK_ERR_OUT_OF_MEMORY when it is larger than
  // this machine's memory or the memory cannot be had.
  static Status read(const std::string& path, const ContainerKind& kind, FileBytes& out, std::string& err);

  // A copy of caller memory (len > 0). CUZK_ERR_OUT_OF_MEMORY as for read().
  static Status copy(const uint8_t* data, size_t len, FileBytes& out, std::string& err);

  // Reads a binfile container (formats.md 0) at `path` as read() does, except the payloads of the
  // sections whose ids `left_in_file` names: those stay in the file (their bytes in data() are
  // untouched memory, costing nothing, and read as zeros) and are read on demand by read_at. The
  // file stays open for that; every read_at checks that the file still has the size and
  // modification time seen here (a file truncated or rewritten since is CUZK_ERR_IO, never a fault).
  // A malformed section table is left for the format's parser to report: the walk stops at it.
  // The header is checked first, as by read().
  static Status read_sections(const std::string& path, const ContainerKind& kind,
                              std::initializer_list<uint32_t> left_in_file, FileBytes& out, std::string& err);

  // Zeroed memory of `size` bytes to write a key into (setup's key made in memory), through
  // mutable_data(). Ranges passed to leave_out() are never written: their pages stay untouched
  // (costing nothing, reading as zeros), holds() is false there and bytes_in_memory() leaves them out.
  static Status blank(size_t size, FileBytes& out, std::string& err);
  uint8_t* mutable_data() { return data_; }
  void leave_out(uint64_t offset, uint64_t len) { left_.push_back({offset, len}); }

  // dst <- bytes [offset, offset + len): from memory where held, else from the file (read_sections).
  Status read_at(uint64_t offset, size_t len, uint8_t* dst, std::string& err) const;
  // Whether bytes [offset, offset + len) are in memory (always, unless read_sections left them).
  bool holds(uint64_t offset, uint64_t len) const;
  // Bytes of the file held in memory (size() less the payloads left in the file).
  uint64_t bytes_in_memory() const;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  Status allocate(size_t size, std::string& err, bool huge_pages = true);
  void release();

  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t mapped_ = 0;  // bytes of the anonymous mapping behind data_
  // read_sections only: the open file, what it was when read, and the payloads left in it.
  struct LeftInFile {
    uint64_t offset, len;
  };
  int fd_ = -1;
  std::string path_;
  int64_t mtime_sec_ = 0, mtime_nsec_ = 0;
  std::vector<LeftInFile> left_;
};

}  // namespace cuzk::formats
