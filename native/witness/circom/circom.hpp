// The types circom's generated C++ (circuit.cpp) uses, with the members it reads and writes, in
// place of circom's own circom.hpp (which pulls in gmp). The generated file is copied with two
// mechanical rewrites (src/witness/compile.ts): `assert(` -> `CUZK_WITNESS_ASSERT(` and
// `std::cout` -> `CUZK_WITNESS_LOG`, so that a failed assert becomes an error status of the
// library call instead of an abort of the host process, with the message circom printed before it.
#pragma once

#include <condition_variable>
#include <cstdint>
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
  std::string templateName;
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
}  // namespace cuzk::witness

#define CUZK_WITNESS_ASSERT(condition) ((condition) ? (void)0 : ::cuzk::witness::assert_failed(#condition))
#define CUZK_WITNESS_LOG (::cuzk::witness::log())
