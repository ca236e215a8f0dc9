// The iden3 "binfile" container shared by .zkey, .wtns, .r1cs and .ptau (formats.md 0):
// magic, u32 version, u32 section count, then {u32 id, u64 size, payload} in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "formats/status.hpp"

namespace cuzk::formats {

// One section as it lies in the file; offsets are from the start of the file.
struct SectionEntry {
  uint32_t id;
  uint64_t header_offset;   // where {id, size} starts
  uint64_t payload_offset;  // header_offset + 12
  uint64_t size;
};

struct SectionView {
  const uint8_t* data;
  uint64_t size;
};

class BinFile {
 public:
  uint32_t version = 0;
  const uint8_t* file_data = nullptr;
  uint64_t file_size = 0;
  std::vector<SectionEntry> sections;  // in file order

  // The section with this id, or nullopt. Ids are unique (parse_binfile rejects duplicates).
  std::optional<SectionView> section(uint32_t id) const;
};

// What a container of one kind starts with: its 4-character magic and the versions this reader knows.
struct ContainerKind {
  const char* magic;
  uint32_t min_version, max_version;
};
inline constexpr ContainerKind kZkeyContainer{"zkey", 1, 1};
inline constexpr ContainerKind kR1csContainer{"r1cs", 1, 1};
inline constexpr ContainerKind kWtnsContainer{"wtns", 1, 2};

// Walks the section table of [data, data + size).
// Fails with CUZK_ERR_FORMAT on a wrong magic or version, a section that does not fit in the file,
// a duplicate id, fewer sections than announced or bytes after the last one.
Status parse_binfile(const uint8_t* data, size_t size, const ContainerKind& kind, BinFile& out, std::string& err);

// dst <- `len` bytes at `offset` of a container of known size; an I/O failure is reported in err.
using ContainerReadAt = std::function<Status(uint64_t offset, size_t len, uint8_t* dst, std::string& err)>;

// The same checks as parse_binfile on the header and on the first `max_sections` section headers
// only, each fetched through `read_at` (a few bytes each): what lets a file be refused before it is
// read whole. A file with more sections passes here and meets the whole check when parsed.
Status probe_binfile(const ContainerReadAt& read_at, uint64_t size, const ContainerKind& kind, uint32_t max_sections,
                     std::string& err);

}  // namespace cuzk::formats
