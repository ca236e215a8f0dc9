#include "formats/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>

namespace cuzk::formats {
namespace {

std::string io_error(const char* what, const std::string& path, int error_number) {
  return std::string(what) + " '" + path + "': " + std::strerror(error_number);
}

// Closes the descriptor on every path out of open(); the mapping does not need it.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

MappedFile::~MappedFile() { release(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(other.data_), size_(other.size_), mapped_(other.mapped_) {
  other.data_ = nullptr;
  other.size_ = 0;
  other.mapped_ = false;
}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    data_ = other.data_;
    size_ = other.size_;
    mapped_ = other.mapped_;
    other.data_ = nullptr;
    other.size_ = 0;
    other.mapped_ = false;
  }
  return *this;
}

void MappedFile::release() {
  if (mapped_) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
}

MappedFile MappedFile::borrow(const uint8_t* data, size_t size) {
  MappedFile view;
  view.data_ = data;
  view.size_ = size;
  return view;
}

Status MappedFile::open(const std::string& path, MappedFile& out, std::string& err, Advice advice) {
  FdCloser file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0) return fail(err, CUZK_ERR_IO, io_error("cannot open", path, errno));

  struct stat st;
  if (::fstat(file.fd, &st) != 0) return fail(err, CUZK_ERR_IO, io_error("cannot stat", path, errno));
  // A directory opens fine with O_RDONLY; a FIFO or device would map garbage or block.
  if (!S_ISREG(st.st_mode)) return fail(err, CUZK_ERR_IO, "cannot map '" + path + "': not a regular file");
  if (st.st_size == 0) return fail(err, CUZK_ERR_FORMAT, "'" + path + "' is empty");
  if (static_cast<uint64_t>(st.st_size) > std::numeric_limits<size_t>::max()) {
    return fail(err, CUZK_ERR_IO, "cannot map '" + path + "': larger than the address space");
  }
  const size_t size = static_cast<size_t>(st.st_size);

  void* mapping = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (mapping == MAP_FAILED) return fail(err, CUZK_ERR_IO, io_error("cannot mmap", path, errno));
  if (advice == Advice::Sequential) ::madvise(mapping, size, MADV_SEQUENTIAL);
  if (advice == Advice::WillNeed) ::madvise(mapping, size, MADV_WILLNEED);

  out.release();
  out.data_ = static_cast<const uint8_t*>(mapping);
  out.size_ = size;
  out.mapped_ = true;
  return CUZK_OK;
}

}  // namespace cuzk::formats
