// The iden3 "binfile" container shared by .zkey, .wtns, .r1cs and .ptau (formats.md 0):
// magic, u32 version, u32 section count, then {u32 id, u64 size, payload} in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
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

// Walks the section table of [data, data + size). `kind` is the 4-character magic ("zkey").
// Fails with CUZK_ERR_FORMAT on a wrong magic or version, a section that does not fit in the file,
// a duplicate id, fewer sections than announced or bytes after the last one.
Status parse_binfile(const uint8_t* data, size_t size, const char* kind,
                     std::initializer_list<uint32_t> accepted_versions, BinFile& out, std::string& err);

}  // namespace cuzk::formats
