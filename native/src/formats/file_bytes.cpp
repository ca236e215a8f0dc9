#include "formats/file_bytes.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "util/machine.hpp"

namespace cuzk::formats {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kReadChunk = size_t(64) << 20;  // large sequential reads: few syscalls, full bandwidth

std::string io_error(const char* what, const std::string& path, int error_number) {
  return std::string(what) + " '" + path + "': " + std::strerror(error_number);
}

// Closes the descriptor on every path out of read().
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

FileBytes::~FileBytes() { release(); }

FileBytes::FileBytes(FileBytes&& other) noexcept : data_(other.data_), size_(other.size_), mapped_(other.mapped_) {
  other.data_ = nullptr;
  other.size_ = other.mapped_ = 0;
}

FileBytes& FileBytes::operator=(FileBytes&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    mapped_ = other.mapped_;
    other.data_ = nullptr;
    other.size_ = other.mapped_ = 0;
  }
  return *this;
}

void FileBytes::release() {
  if (data_) ::munmap(data_, mapped_);
  data_ = nullptr;
  size_ = mapped_ = 0;
}

Status FileBytes::allocate(size_t size, std::string& err) {
  release();
  if (size > physical_memory()) {
    return fail(err, CUZK_ERR_OUT_OF_MEMORY,
                std::to_string(size) + " bytes is more than this machine's memory (" +
                    std::to_string(physical_memory()) + " bytes)");
  }
  // Anonymous memory in huge pages where offered: one fault per 2 MiB as the bytes arrive, not 512.
  const size_t bytes = (size + kHugePage - 1) / kHugePage * kHugePage;
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    return fail(err, CUZK_ERR_OUT_OF_MEMORY, "could not allocate " + std::to_string(size) + " bytes: " +
                                                 std::strerror(errno));
  }
  ::madvise(p, bytes, MADV_HUGEPAGE);
  data_ = static_cast<uint8_t*>(p);
  size_ = size;
  mapped_ = bytes;
  return CUZK_OK;
}

Status FileBytes::copy(const uint8_t* data, size_t len, FileBytes& out, std::string& err) {
  FileBytes bytes;
  if (Status s = bytes.allocate(len, err); s != CUZK_OK) return s;
  std::memcpy(bytes.data_, data, len);
  out = std::move(bytes);
  return CUZK_OK;
}

Status FileBytes::read(const std::string& path, FileBytes& out, std::string& err) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below like any non-file.
  FdCloser file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) return fail(err, CUZK_ERR_IO, io_error("cannot open", path, errno));

  struct stat st;
  if (::fstat(file.fd, &st) != 0) return fail(err, CUZK_ERR_IO, io_error("cannot stat", path, errno));
  // Only a regular file has a size to check before reading: a directory, FIFO, socket or device
  // (/dev/zero would be read without end) is refused.
  if (!S_ISREG(st.st_mode)) return fail(err, CUZK_ERR_IO, "cannot read '" + path + "': not a regular file");
  if (st.st_size == 0) return fail(err, CUZK_ERR_FORMAT, "'" + path + "' is empty");
  if ((uint64_t)st.st_size > SIZE_MAX) {
    return fail(err, CUZK_ERR_OUT_OF_MEMORY, "'" + path + "' is larger than the address space");
  }
  const size_t size = (size_t)st.st_size;
  ::posix_fadvise(file.fd, 0, 0, POSIX_FADV_SEQUENTIAL);

  FileBytes bytes;
  if (Status s = bytes.allocate(size, err); s != CUZK_OK) return fail(err, s, "'" + path + "': " + err);
  size_t done = 0;
  while (done < size) {
    const size_t want = size - done < kReadChunk ? size - done : kReadChunk;
    ssize_t got = ::read(file.fd, bytes.data_ + done, want);
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return fail(err, CUZK_ERR_IO, io_error("cannot read", path, errno));
    }
    if (got == 0) {
      return fail(err, CUZK_ERR_IO, "'" + path + "' shrank from " + std::to_string(size) + " to " +
                                        std::to_string(done) + " bytes while it was read");
    }
    done += (size_t)got;
  }
  // A file still being written when it was read is refused rather than used half-written.
  struct stat after;
  if (::fstat(file.fd, &after) != 0) return fail(err, CUZK_ERR_IO, io_error("cannot stat", path, errno));
  if (after.st_size != st.st_size) {
    return fail(err, CUZK_ERR_IO, "'" + path + "' changed size (" + std::to_string(size) + " -> " +
                                      std::to_string((uint64_t)after.st_size) + " bytes) while it was read");
  }
  out = std::move(bytes);
  return CUZK_OK;
}

}  // namespace cuzk::formats
