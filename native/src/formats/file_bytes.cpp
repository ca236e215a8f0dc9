#include "formats/file_bytes.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "formats/byte_reader.hpp"

#include "util/machine.hpp"

namespace cuzk::formats {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kReadChunk = size_t(64) << 20;  // large sequential reads: few syscalls, full bandwidth
// Section headers checked before a file is read whole; the formats read here have at most ten.
constexpr uint32_t kProbedSections = 64;

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

FileBytes::FileBytes(FileBytes&& other) noexcept { *this = std::move(other); }

FileBytes& FileBytes::operator=(FileBytes&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    mapped_ = other.mapped_;
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    mtime_sec_ = other.mtime_sec_;
    mtime_nsec_ = other.mtime_nsec_;
    left_ = std::move(other.left_);
    other.data_ = nullptr;
    other.size_ = other.mapped_ = 0;
    other.fd_ = -1;
    other.left_.clear();
  }
  return *this;
}

void FileBytes::release() {
  if (data_) ::munmap(data_, mapped_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  size_ = mapped_ = 0;
  fd_ = -1;
  left_.clear();
}

Status FileBytes::allocate(size_t size, std::string& err, bool huge_pages) {
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
  ::madvise(p, bytes, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  data_ = static_cast<uint8_t*>(p);
  size_ = size;
  mapped_ = bytes;
  return CUZK_OK;
}

Status FileBytes::blank(size_t size, FileBytes& out, std::string& err) {
  FileBytes bytes;
  if (Status s = bytes.allocate(size, err, false); s != CUZK_OK) return s;  // 4 KiB pages: holes stay holes
  out = std::move(bytes);
  return CUZK_OK;
}

Status FileBytes::copy(const uint8_t* data, size_t len, FileBytes& out, std::string& err) {
  FileBytes bytes;
  if (Status s = bytes.allocate(len, err); s != CUZK_OK) return s;
  std::memcpy(bytes.data_, data, len);
  out = std::move(bytes);
  return CUZK_OK;
}

namespace {

// Opens `path` for reading, refusing anything but a non-empty regular file that fits the address
// space; *st is its state at open.
Status open_regular(const std::string& path, FdCloser& file, struct stat* st, std::string& err) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below like any non-file.
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (file.fd < 0) return fail(err, CUZK_ERR_IO, io_error("cannot open", path, errno));
  if (::fstat(file.fd, st) != 0) return fail(err, CUZK_ERR_IO, io_error("cannot stat", path, errno));
  // Only a regular file has a size to check before reading: a directory, FIFO, socket or device
  // (/dev/zero would be read without end) is refused.
  if (!S_ISREG(st->st_mode)) return fail(err, CUZK_ERR_IO, "cannot read '" + path + "': not a regular file");
  if (st->st_size == 0) return fail(err, CUZK_ERR_FORMAT, "'" + path + "' is empty");
  if ((uint64_t)st->st_size > SIZE_MAX) {
    return fail(err, CUZK_ERR_OUT_OF_MEMORY, "'" + path + "' is larger than the address space");
  }
  return CUZK_OK;
}

// dst <- exactly len bytes at `offset` of the open file (of `size` bytes when opened).
Status read_fully(int fd, uint64_t offset, size_t len, uint8_t* dst, const std::string& path, size_t size,
                  std::string& err) {
  size_t done = 0;
  while (done < len) {
    const size_t want = len - done < kReadChunk ? len - done : kReadChunk;
    ssize_t got = ::pread(fd, dst + done, want, (off_t)(offset + done));
    if (got < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return fail(err, CUZK_ERR_IO, io_error("cannot read", path, errno));
    }
    if (got == 0) {
      return fail(err, CUZK_ERR_IO, "'" + path + "' shrank from " + std::to_string(size) + " to " +
                                        std::to_string(offset + done) + " bytes while it was read");
    }
    done += (size_t)got;
  }
  return CUZK_OK;
}

// The container's header and section table, read from the open file a few bytes at a time.
Status probe_container(int fd, size_t size, const ContainerKind& kind, const std::string& path, std::string& err) {
  auto from_file = [&](uint64_t offset, size_t len, uint8_t* dst, std::string& e) {
    return read_fully(fd, offset, len, dst, path, size, e);
  };
  if (Status s = probe_binfile(from_file, size, kind, kProbedSections, err); s != CUZK_OK) {
    if (s == CUZK_ERR_FORMAT) err = "'" + path + "': " + err;
    return s;
  }
  return CUZK_OK;
}

// A file still being written when it was read is refused rather than used half-written.
Status same_size_after(int fd, const struct stat& st, const std::string& path, std::string& err) {
  struct stat after;
  if (::fstat(fd, &after) != 0) return fail(err, CUZK_ERR_IO, io_error("cannot stat", path, errno));
  if (after.st_size != st.st_size) {
    return fail(err, CUZK_ERR_IO, "'" + path + "' changed size (" + std::to_string((uint64_t)st.st_size) + " -> " +
                                      std::to_string((uint64_t)after.st_size) + " bytes) while it was read");
  }
  return CUZK_OK;
}

}  // namespace

Status FileBytes::read(const std::string& path, const ContainerKind& kind, FileBytes& out, std::string& err) {
  FdCloser file{-1};
  struct stat st;
  if (Status s = open_regular(path, file, &st, err); s != CUZK_OK) return s;
  const size_t size = (size_t)st.st_size;
  if (Status s = probe_container(file.fd, size, kind, path, err); s != CUZK_OK) return s;
  ::posix_fadvise(file.fd, 0, 0, POSIX_FADV_SEQUENTIAL);

  FileBytes bytes;
  if (Status s = bytes.allocate(size, err); s != CUZK_OK) return fail(err, s, "'" + path + "': " + err);
  if (Status s = read_fully(file.fd, 0, size, bytes.data_, path, size, err); s != CUZK_OK) return s;
  if (Status s = same_size_after(file.fd, st, path, err); s != CUZK_OK) return s;
  out = std::move(bytes);
  return CUZK_OK;
}

Status FileBytes::read_sections(const std::string& path, const ContainerKind& kind,
                                std::initializer_list<uint32_t> left_in_file, FileBytes& out, std::string& err) {
  FdCloser file{-1};
  struct stat st;
  if (Status s = open_regular(path, file, &st, err); s != CUZK_OK) return s;
  const size_t size = (size_t)st.st_size;
  if (Status s = probe_container(file.fd, size, kind, path, err); s != CUZK_OK) return s;
  FileBytes bytes;
  // The mapping is the whole file's size but only what is read below is ever touched: in 4 KiB
  // pages, except inside large payloads read (huge pages there would also cover bytes left out).
  if (Status s = bytes.allocate(size, err, false); s != CUZK_OK) return fail(err, s, "'" + path + "': " + err);
  auto huge_pages_inside = [&](uint64_t from, uint64_t len) {
    const uint64_t lo = (from + kHugePage - 1) / kHugePage * kHugePage, hi = (from + len) / kHugePage * kHugePage;
    if (hi > lo) ::madvise(bytes.data_ + lo, hi - lo, MADV_HUGEPAGE);
  };
  // magic, version, section count; then per section {u32 id, u64 size} and its payload.
  uint64_t at = size < 12 ? size : 12;
  if (Status s = read_fully(file.fd, 0, (size_t)at, bytes.data_, path, size, err); s != CUZK_OK) return s;
  while (at + 12 <= size) {
    if (Status s = read_fully(file.fd, at, 12, bytes.data_ + at, path, size, err); s != CUZK_OK) return s;
    const uint32_t id = load_u32_le(bytes.data_ + at);
    const uint64_t len = load_u64_le(bytes.data_ + at + 4);
    at += 12;
    if (len > size - at) break;  // the parser reports a section that does not fit
    bool leave = false;
    for (uint32_t l : left_in_file) leave = leave || l == id;
    if (leave) {
      bytes.left_.push_back({at, len});
      at += len;
      continue;
    }
    huge_pages_inside(at, len);
    if (Status s = read_fully(file.fd, at, (size_t)len, bytes.data_ + at, path, size, err); s != CUZK_OK) {
      return s;
    }
    at += len;
  }
  if (at < size) {  // bytes after the last section, or a partial header: the parser sees them as they are
    if (Status s = read_fully(file.fd, at, size - at, bytes.data_ + at, path, size, err); s != CUZK_OK) return s;
  }
  if (Status s = same_size_after(file.fd, st, path, err); s != CUZK_OK) return s;
  bytes.path_ = path;
  bytes.mtime_sec_ = st.st_mtim.tv_sec;
  bytes.mtime_nsec_ = st.st_mtim.tv_nsec;
  bytes.fd_ = file.fd;
  file.fd = -1;  // kept open for read_at
  out = std::move(bytes);
  return CUZK_OK;
}

bool FileBytes::holds(uint64_t offset, uint64_t len) const {
  for (const LeftInFile& l : left_) {
    if (offset < l.offset + l.len && l.offset < offset + len) return false;
  }
  return true;
}

uint64_t FileBytes::bytes_in_memory() const {
  uint64_t left = 0;
  for (const LeftInFile& l : left_) left += l.len;
  return size_ - left;
}

Status FileBytes::read_at(uint64_t offset, size_t len, uint8_t* dst, std::string& err) const {
  if (offset > size_ || len > size_ - offset) {
    return fail(err, CUZK_ERR_INTERNAL, "read of bytes " + std::to_string(offset) + "+" + std::to_string(len) +
                                            " past the " + std::to_string(size_) + " bytes of '" + path_ + "'");
  }
  if (holds(offset, len)) {
    std::memcpy(dst, data_ + offset, len);
    return CUZK_OK;
  }
  // The bytes must be those checked at open: the same file, not truncated or rewritten since.
  auto unchanged = [&]() -> Status {
    struct stat now;
    if (::fstat(fd_, &now) != 0) return fail(err, CUZK_ERR_IO, io_error("cannot stat", path_, errno));
    if ((uint64_t)now.st_size != size_ || now.st_mtim.tv_sec != mtime_sec_ || now.st_mtim.tv_nsec != mtime_nsec_) {
      return fail(err, CUZK_ERR_IO, "'" + path_ + "' changed since the key was opened (now " +
                                        std::to_string((uint64_t)now.st_size) + " bytes, was " + std::to_string(size_) +
                                        "): its point sections are read from the file, so it must stay as it was");
    }
    return CUZK_OK;
  };
  if (Status s = unchanged(); s != CUZK_OK) return s;
  if (Status s = read_fully(fd_, offset, len, dst, path_, size_, err); s != CUZK_OK) return s;
  return unchanged();  // a change during the read is refused too
}

}  // namespace cuzk::formats
