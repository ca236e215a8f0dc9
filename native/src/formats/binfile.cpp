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

namespace {

// The header and the section table through `read_at`, checked as parse_binfile documents; stops
// after `max_sections` sections (then without the check for trailing bytes).
Status walk_sections(const ContainerReadAt& read_at, uint64_t size, const ContainerKind& kind, uint32_t max_sections,
                     std::vector<SectionEntry>& sections, uint32_t& version, std::string& err) {
  const std::string what = std::string(kind.magic) + " file";
  if (size == 0) return fail(err, CUZK_ERR_FORMAT, what + " is empty");
  if (size < 12) {
    return fail(err, CUZK_ERR_FORMAT,
                what + " is truncated: " + std::to_string(size) + " bytes, the header alone needs 12");
  }
  uint8_t header[12];
  if (Status s = read_at(0, 12, header, err); s != CUZK_OK) return s;
  if (std::memcmp(header, kind.magic, 4) != 0) {
    return fail(err, CUZK_ERR_FORMAT, "not a " + what + ": magic is " + describe_magic(header) + ", expected '" +
                                          std::string(kind.magic, 4) + "'");
  }
  version = load_u32_le(header + 4);
  const uint32_t n_sections = load_u32_le(header + 8);
  if (version < kind.min_version || version > kind.max_version) {
    std::string accepted;
    for (uint32_t v = kind.min_version; v <= kind.max_version; ++v) {
      accepted += (accepted.empty() ? "" : " or ") + std::to_string(v);
    }
    return fail(err, CUZK_ERR_FORMAT,
                what + " has version " + std::to_string(version) + ", this reader knows " + accepted);
  }

  // The loop is bounded by the bytes present, not by the (untrusted) announced count.
  uint64_t at = 12;
  sections.clear();
  for (uint32_t i = 0; i < n_sections; ++i) {
    if (i == max_sections) return CUZK_OK;
    const uint64_t header_offset = at;
    if (size - at < 12) {
      return fail(err, CUZK_ERR_FORMAT,
                  what + " is truncated: it announces " + std::to_string(n_sections) + " sections but section #" +
                      std::to_string(i) + " has no complete header at offset " + std::to_string(header_offset));
    }
    uint8_t entry[12];
    if (Status s = read_at(at, 12, entry, err); s != CUZK_OK) return s;
    const uint32_t id = load_u32_le(entry);
    const uint64_t section_size = load_u64_le(entry + 4);
    const uint64_t payload_offset = at + 12;
    if (section_size > size - payload_offset) {
      return fail(err, CUZK_ERR_FORMAT,
                  what + ": section " + std::to_string(id) + " at offset " + std::to_string(header_offset) +
                      " claims " + std::to_string(section_size) + " bytes but only " +
                      std::to_string(size - payload_offset) + " remain (truncated file?)");
    }
    sections.push_back(SectionEntry{id, header_offset, payload_offset, section_size});
    at = payload_offset + section_size;
  }
  // No writer leaves bytes after the last section: their presence means a wrong count or a
  // damaged file, either of which would make us ignore data.
  if (at != size) {
    return fail(err, CUZK_ERR_FORMAT,
                what + ": " + std::to_string(size - at) + " bytes follow the last of its " +
                    std::to_string(n_sections) + " sections");
  }
  return CUZK_OK;
}

}  // namespace

Status probe_binfile(const ContainerReadAt& read_at, uint64_t size, const ContainerKind& kind, uint32_t max_sections,
                     std::string& err) {
  std::vector<SectionEntry> sections;
  uint32_t version = 0;
  return walk_sections(read_at, size, kind, max_sections, sections, version, err);
}

Status parse_binfile(const uint8_t* data, size_t size, const ContainerKind& kind, BinFile& out, std::string& err) {
  const std::string what = std::string(kind.magic) + " file";
  out = BinFile{};
  if (data == nullptr) return fail(err, CUZK_ERR_FORMAT, what + " is empty");
  auto from_memory = [&](uint64_t offset, size_t len, uint8_t* dst, std::string&) {
    std::memcpy(dst, data + offset, len);
    return CUZK_OK;
  };
  std::vector<SectionEntry> sections;
  uint32_t version = 0;
  if (Status s = walk_sections(from_memory, size, kind, UINT32_MAX, sections, version, err); s != CUZK_OK) return s;

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
