// The witness calculator's state as circom's generated C++ (circuit.cpp) sees it: the members it
// uses, in place of circom's calcwit.hpp. One Circom_CalcWit per computation (entry.cpp); the
// circuit's tables are shared and read-only.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "circom.hpp"
#include "fr.hpp"

// The parsed .dat file: what every computation of the circuit reads.
struct Circom_Circuit {
  HashSignalInfo* InputHashMap = nullptr;
  u64* witness2SignalList = nullptr;
  FrElement* circuitConstants = nullptr;
  std::map<u32, IOFieldDefPair> templateInsId2IOSignalInfo;
  IOFieldDefPair* busInsId2FieldInfo = nullptr;
};

class Circom_CalcWit {
 public:
  FrElement* signalValues;
  Circom_Component* componentMemory;
  FrElement* circuitConstants;
  std::map<u32, IOFieldDefPair> templateInsId2IOSignalInfo;
  IOFieldDefPair* busInsId2FieldInfo;
  std::string* listOfTemplateMessages = nullptr;

  // circom's parallel components (threads) wait on these.
  std::mutex numThreadMutex;
  std::condition_variable ntcvs;
  int numThread = 0;
  int maxThread;

  Circom_CalcWit(const Circom_Circuit& circuit, int max_threads);
  ~Circom_CalcWit();
  Circom_CalcWit(const Circom_CalcWit&) = delete;
  Circom_CalcWit& operator=(const Circom_CalcWit&) = delete;

  // The component path of `id_cmp` ("main.h[3].sigmaF[0]"), for assert messages.
  std::string getTrace(u64 id_cmp);
  std::string generate_position_array(uint* dimensions, uint size_dimensions, uint index);
};

typedef void (*Circom_TemplateFunction)(uint __cIdx, Circom_CalcWit* __ctx);

// The circuit's entry (circuit.cpp): creates and runs the main component.
void run(Circom_CalcWit* ctx);
