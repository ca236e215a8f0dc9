// A minimal test harness: CHECK records a failure with its location and keeps going; finish()
// prints the closing line CI reads ("N passed, N failed") and the exit status.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace cuzk_test {
inline int g_passed = 0, g_failed = 0;
inline void record(bool ok, const char* expr, const char* file, int line) {
  if (ok) { g_passed++; return; }
  g_failed++;
  std::fprintf(stderr, "FAIL %s:%d: %s\n", file, line, expr);
}
// This process's thread count (/proc/self/status), for the tests that no call leaves threads behind.
inline int threads_now() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  return -1;
}
// A test's one optional option, `<test> [name N]`: N (lo..hi), or `fallback` without it. Anything
// else on the command line prints the usage and exits 2.
inline long int_option(int argc, char** argv, const char* name, long fallback, long lo, long hi) {
  if (argc == 1) return fallback;
  char* end = nullptr;
  const long v = argc == 3 && std::strcmp(argv[1], name) == 0 ? std::strtol(argv[2], &end, 10) : lo - 1;
  if (end && *end == '\0' && v >= lo && v <= hi) return v;
  std::fprintf(stderr, "usage: %s [%s N], N from %ld to %ld\n", argv[0], name, lo, hi);
  std::exit(2);
}
inline int finish(const char* suite) {
  std::printf("%s: %d passed, %d failed\n", suite, g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
// A value of one type read as another of the same size (host and device twins share bytes).
template <class To, class From>
To same_bytes(const From& f) {
  static_assert(sizeof(To) == sizeof(From), "layouts must match");
  To t;
  std::memcpy(&t, &f, sizeof t);
  return t;
}
}  // namespace cuzk_test

#define CHECK(expr) ::cuzk_test::record(static_cast<bool>(expr), #expr, __FILE__, __LINE__)
// CHECK with a printf-style account of what was wrong.
#define CHECK_MSG(expr, ...)                                          \
  do {                                                                \
    const bool check_ok_ = static_cast<bool>(expr);                   \
    if (!check_ok_) {                                                 \
      std::fprintf(stderr, __VA_ARGS__);                              \
      std::fputc('\n', stderr);                                       \
    }                                                                 \
    ::cuzk_test::record(check_ok_, #expr, __FILE__, __LINE__);        \
  } while (0)
