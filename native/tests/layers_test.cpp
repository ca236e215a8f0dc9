// The floors of native/src stay as docs/architecture.md states them. The test reads the floor table
// of that document (the one statement of the order) and checks every `#include "folder/..."` in
// native/src against it: a folder includes itself and the folders its row names, nothing else, and
// each named folder is on a lower floor. Every folder of native/src must have a row. And the library
// reads no process environment: its settings travel with the calls (option structs and flags), so
// no source under native/src names getenv.
#include <cstdio>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "check.hpp"

namespace fs = std::filesystem;

namespace {

struct Floor {
  int level = 0;
  std::set<std::string> includes;
};

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Backticked words of a table cell, without a trailing slash: "`curve`, `util/`" -> {curve, util}.
std::vector<std::string> backticked(const std::string& cell) {
  std::vector<std::string> out;
  for (size_t a = cell.find('`'); a != std::string::npos; a = cell.find('`', a + 1)) {
    size_t b = cell.find('`', a + 1);
    if (b == std::string::npos) break;
    std::string w = cell.substr(a + 1, b - a - 1);
    if (!w.empty() && w.back() == '/') w.pop_back();
    out.push_back(w);
    a = b;
  }
  return out;
}

// Rows "| <floor> | `folder/` | what | `a`, `b` |" of docs/architecture.md.
std::map<std::string, Floor> read_floors(const std::string& path) {
  std::map<std::string, Floor> floors;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.size() < 3 || line[0] != '|' || !std::isdigit((unsigned char)trim(line.substr(1))[0])) continue;
    std::vector<std::string> cells;
    std::stringstream ss(line.substr(1));
    std::string cell;
    while (std::getline(ss, cell, '|')) cells.push_back(trim(cell));
    if (cells.size() < 4) continue;
    std::vector<std::string> folder = backticked(cells[1]);
    if (folder.size() != 1) continue;
    Floor f;
    f.level = std::stoi(cells[0]);
    for (const std::string& w : backticked(cells[3])) f.includes.insert(w);
    floors[folder[0]] = f;
  }
  return floors;
}

// "cuda/msm" for a file in native/src/cuda/msm/; "" for a file directly in its folder.
std::string room_of(const fs::path& folder_path, const fs::path& file) {
  const fs::path rel = fs::relative(file, folder_path);
  if (std::distance(rel.begin(), rel.end()) < 2) return "";
  return folder_path.filename().string() + "/" + rel.begin()->string();
}

}  // namespace

int main() {
  const auto floors = read_floors("docs/architecture.md");
  CHECK(floors.size() >= 10);
  if (floors.empty()) return cuzk_test::finish("layers_test");

  // The table itself names only lower floors.
  for (const auto& [folder, f] : floors)
    for (const std::string& dep : f.includes) {
      auto it = floors.find(dep);
      const bool lower = it != floors.end() && it->second.level < f.level;
      CHECK(lower);
      if (!lower) std::fprintf(stderr, "  table: %s (floor %d) names %s, not on a lower floor\n", folder.c_str(), f.level, dep.c_str());
    }

  size_t files = 0, includes = 0;
  for (const auto& entry : fs::directory_iterator("native/src")) {
    if (!entry.is_directory()) continue;
    const std::string folder = entry.path().filename().string();
    auto it = floors.find(folder);
    const bool listed = it != floors.end();
    CHECK(listed);
    if (!listed) { std::fprintf(stderr, "  native/src/%s/ has no row in docs/architecture.md\n", folder.c_str()); continue; }
    for (const auto& sub : fs::directory_iterator(entry.path())) {
      if (!sub.is_directory()) continue;
      const std::string room = folder + "/" + sub.path().filename().string();
      const bool room_listed = floors.count(room) > 0;
      CHECK(room_listed);
      if (!room_listed) std::fprintf(stderr, "  native/src/%s/ has no row in docs/architecture.md\n", room.c_str());
    }
    for (const auto& file : fs::recursive_directory_iterator(entry.path())) {
      if (!file.is_regular_file()) continue;
      files++;
      std::ifstream in(file.path());
      std::string line;
      for (int n = 1; std::getline(in, line); n++) {
        const bool reads_env = line.find("getenv") != std::string::npos;
        CHECK(!reads_env);
        if (reads_env)
          std::fprintf(stderr, "  %s:%d reads the environment (getenv): make it an option of the call\n",
                       file.path().string().c_str(), n);
        std::string t = trim(line);
        if (t.rfind("#include \"", 0) != 0) continue;
        size_t a = t.find('"') + 1, slash = t.find('/', a), close = t.find('"', a);
        if (slash == std::string::npos || slash > close) continue;  // "cuzk.h" and the like
        const std::string dep = t.substr(a, slash - a);
        includes++;
        const bool allowed = dep == folder || it->second.includes.count(dep) > 0;
        CHECK(allowed);
        if (!allowed)
          std::fprintf(stderr, "  %s:%d includes %s/, which the %s/ row of docs/architecture.md does not name\n",
                       file.path().string().c_str(), n, dep.c_str(), folder.c_str());
        // Inside a folder with rooms (rows "folder/room"): a room includes its own and lower rooms.
        const std::string room = room_of(entry.path(), file.path());
        size_t slash2 = t.find('/', slash + 1);
        if (dep != folder || room.empty() || slash2 == std::string::npos || slash2 > close) continue;
        const std::string dep_room = t.substr(a, slash2 - a);
        auto own = floors.find(room);
        const bool room_allowed =
            dep_room == room || (own != floors.end() && own->second.includes.count(dep_room) > 0);
        CHECK(room_allowed);
        if (!room_allowed)
          std::fprintf(stderr, "  %s:%d includes %s/, which the %s/ row of docs/architecture.md does not name\n",
                       file.path().string().c_str(), n, dep_room.c_str(), room.c_str());
      }
    }
  }
  std::printf("  %zu folders, %zu files, %zu folder includes checked\n", floors.size(), files, includes);
  return cuzk_test::finish("layers_test");
}
