// The types circom's generated C++ (circuit.cpp) uses, with the members it reads and writes, in
// place of circom's own circom.hpp (which pulls in gmp). The generated file is compiled after the
// mechanical rewrites of src/witness/rewrite.ts: `assert(` -> `CUZK_WITNESS_ASSERT(` and
// `std::cout` -> `CUZK_WITNESS_LOG`, so that a failed assert becomes an error status of the
// library call instead of an abort of the host process, with the message circom printed before it;
// a run of constant copies into locals -> one copy_constants from a constant_image.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "fr.hpp"

typedef unsigned long long u64;
typedef uint32_t u32;
typedef uint8_t u8;

// One main input of the circuit (the .dat file's hash table): fnv1a-64 of the name.
struct __attribute__((__packed__)) HashSignalInfo {
  u64 hash;
  u64 signalid;
  u64 signalsize;
};

struct IOFieldDef {
  u32 offset;
  u32 len;
  u32* lengths;
  u32 size;
  u32 busId;
};

struct IOFieldDefPair {
  u32 len;
  IOFieldDef* defs;
};

struct Circom_Component {
  u32 templateId;
  u64 signalStart;
  u32 inputCounter;
  const char* templateName = nullptr;  // circuit.cpp assigns it a literal
  std::string componentName;
  u64 idFather;
  u32* subcomponents = nullptr;
  bool* subcomponentsParallel = nullptr;
  bool* outputIsSet = nullptr;
  std::mutex* mutexes = nullptr;
  std::condition_variable* cvs = nullptr;
  std::thread* sbct = nullptr;
};

// Defined by circuit.cpp.
uint get_main_input_signal_start();
uint get_main_input_signal_no();
uint get_total_signal_no();
uint get_number_of_components();
uint get_size_of_input_hashmap();
uint get_size_of_witness();
uint get_size_of_constants();
uint get_size_of_io_map();
uint get_size_of_bus_field_map();

namespace cuzk::witness {
// Thrown by CUZK_WITNESS_ASSERT; caught at the C boundary (entry.cpp).
struct AssertFailed {
  const char* condition;
};
[[noreturn]] void assert_failed(const char* condition);
// Where circuit.cpp's messages go during a computation (this thread's).
std::ostream& log();
// A constant of the .dat (circom stores small integers in Montgomery form too) as a small
// integer when its value is one: loop counters and indices built from it then stay on the
// 32-bit fast paths of fr.cpp. The value is unchanged.
void make_short_when_small(FrElement& e);
// The element's canonical value as 32 bytes, little-endian, standard form (a witness value).
void store_standard(FrElement* e, uint8_t* out);
// constants[index[0..n)] side by side, made once (the circuit's constants never change) and kept
// while the library is loaded: what a run of circom's copies of constants into consecutive locals
// writes, so that run is one copy_constants. An index outside the constants is std::out_of_range.
const FrElement* constant_image(const FrElement* constants, const u32* index, size_t n);
inline void copy_constants(FrElement* dest, const FrElement* image, size_t n) { std::memcpy(dest, image, n * sizeof(FrElement)); }
// `p` as the compiler cannot see through: a thread-local array's address, looked up once per
// run instead of before each use (every call in between would make it look it up again).
inline FrElement* looked_up(FrElement* p) {
  asm("" : "+r"(p));
  return p;
}
// dest[offsets[i]] = image[offsets[i]]: a run's locals that its function may have written since.
inline void restore_constants(FrElement* dest, const FrElement* image, const u32* offsets, size_t n) {
  for (size_t i = 0; i < n; i++) Fr_copy(&dest[offsets[i]], const_cast<FrElement*>(&image[offsets[i]]));
}
}  // namespace cuzk::witness

#define CUZK_WITNESS_ASSERT(condition) ((condition) ? (void)0 : ::cuzk::witness::assert_failed(#condition))
#define CUZK_WITNESS_LOG (::cuzk::witness::log())
