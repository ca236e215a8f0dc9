#include "formats/binfile.hpp"

#include <algorithm>
#include <cstring>

#include "formats/byte_reader.hpp"

namespace cuzk::formats {
namespace {

// The magic as text when printable, else as hex, for messages like "not a zkey file".
std::string describe_magic(const uint8_t* m) {
  bool printable = true;
  for (int i = 0; i < 4; ++i) printable = printable && m[i] >= 0x20 && m[i] < 0x7f;
  if (printable) return "'" + std::string(reinterpret_cast<const char*>(m), 4) + "'";
  static const char* hex = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 0; i < 4; ++i) {
    s += hex[m[i] >> 4];
    s += hex[m[i] & 15];
  }
  return s;
}

}  // namespace

std::optional<SectionView> BinFile::section(uint32_t id) const {
  for (const SectionEntry& s : sections) {
    if (s.id == id) return SectionView{file_data + s.payload_offset, s.size};
  }
  return std::nullopt;
}

Status parse_binfile(const uint8_t* data, size_t size, const char* kind,
                     std::initializer_list<uint32_t> accepted_versions, BinFile& out, std::string& err) {
  const std::string what = std::string(kind) + " file";
  out = BinFile{};
  if (data == nullptr || size == 0) return fail(err, CUZK_ERR_FORMAT, what + " is empty");

  ByteReader reader(data, size);
  const uint8_t* magic = nullptr;
  uint32_t version = 0;
  uint32_t n_sections = 0;
  if (!reader.take(4, magic) || !reader.read_u32(version) || !reader.read_u32(n_sections)) {
    return fail(err, CUZK_ERR_FORMAT,
                what + " is truncated: " + std::to_string(size) + " bytes, the header alone needs 12");
  }
  if (std::memcmp(magic, kind, 4) != 0) {
    return fail(err, CUZK_ERR_FORMAT, "not a " + what + ": magic is " + describe_magic(magic) + ", expected '" +
                                          std::string(kind, 4) + "'");
  }
  if (std::find(accepted_versions.begin(), accepted_versions.end(), version) == accepted_versions.end()) {
    std::string accepted;
    for (uint32_t v : accepted_versions) accepted += (accepted.empty() ? "" : " or ") + std::to_string(v);
    return fail(err, CUZK_ERR_FORMAT,
                what + " has version " + std::to_string(version) + ", this reader knows " + accepted);
  }

  // The loop is bounded by the bytes present, not by the (untrusted) announced count.
  std::vector<SectionEntry> sections;
  for (uint32_t i = 0; i < n_sections; ++i) {
    const uint64_t header_offset = reader.position();
    uint32_t id = 0;
    uint64_t section_size = 0;
    if (!reader.read_u32(id) || !reader.read_u64(section_size)) {
      return fail(err, CUZK_ERR_FORMAT,
                  what + " is truncated: it announces " + std::to_string(n_sections) + " sections but section #" +
                      std::to_string(i) + " has no complete header at offset " + std::to_string(header_offset));
    }
    const uint64_t payload_offset = reader.position();
    const uint8_t* payload = nullptr;
    if (!reader.take(section_size, payload)) {
      return fail(err, CUZK_ERR_FORMAT,
                  what + ": section " + std::to_string(id) + " at offset " + std::to_string(header_offset) +
                      " claims " + std::to_string(section_size) + " bytes but only " +
                      std::to_string(size - payload_offset) + " remain (truncated file?)");
    }
    sections.push_back(SectionEntry{id, header_offset, payload_offset, section_size});
  }
  // No writer leaves bytes after the last section: their presence means a wrong count or a
  // damaged file, either of which would make us ignore data.
  if (reader.remaining() != 0) {
    return fail(err, CUZK_ERR_FORMAT,
                what + ": " + std::to_string(reader.remaining()) + " bytes follow the last of its " +
                    std::to_string(n_sections) + " sections");
  }

  // Sorted copy: a hostile file may hold millions of empty sections, so no quadratic scan.
  std::vector<SectionEntry> by_id = sections;
  std::stable_sort(by_id.begin(), by_id.end(),
                   [](const SectionEntry& a, const SectionEntry& b) { return a.id < b.id; });
  for (size_t i = 1; i < by_id.size(); ++i) {
    if (by_id[i].id == by_id[i - 1].id) {
      return fail(err, CUZK_ERR_FORMAT,
                  what + ": section " + std::to_string(by_id[i].id) + " appears twice (offsets " +
                      std::to_string(by_id[i - 1].header_offset) + " and " + std::to_string(by_id[i].header_offset) +
                      ")");
    }
  }

  out.version = version;
  out.file_data = data;
  out.file_size = size;
  out.sections = std::move(sections);
  return CUZK_OK;
}

}  // namespace cuzk::formats
