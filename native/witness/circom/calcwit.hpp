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
#include <thread>
#include <utility>
#include <vector>

#include "circom.hpp"
#include "fr.hpp"

// The io field layout of each template instance, by its id (circuit.cpp reads
// `ctx->templateInsId2IOSignalInfo[id].defs[k]`): an array lookup where circom has a std::map.
class IOSignalInfoTable {
 public:
  void set(u32 id, IOFieldDefPair pair) {
    if (id >= entries_.size()) entries_.resize((size_t)id + 1, IOFieldDefPair{0, nullptr});
    entries_[id] = pair;
  }
  const IOFieldDefPair& operator[](u32 id) const { return id < entries_.size() ? entries_[id] : kNone; }

 private:
  static constexpr IOFieldDefPair kNone{0, nullptr};
  std::vector<IOFieldDefPair> entries_;
};

// The parsed .dat file: what every computation of the circuit reads.
struct Circom_Circuit {
  HashSignalInfo* InputHashMap = nullptr;
  u64* witness2SignalList = nullptr;
  FrElement* circuitConstants = nullptr;
  IOSignalInfoTable templateInsId2IOSignalInfo;
  IOFieldDefPair* busInsId2FieldInfo = nullptr;
};

// The signal values and component slots of one computation; entry.cpp keeps a few for reuse
// (fresh ones cost page faults and constructors every time). Each array is mapped on its own and
// asks for transparent huge pages: tens of MB first touched in 4 KiB pages cost a fault each (a
// third of a fresh process's first witness).
class CalcWitMemory {
 public:
  CalcWitMemory(size_t n_signals, size_t n_components);
  ~CalcWitMemory();
  CalcWitMemory(const CalcWitMemory&) = delete;
  CalcWitMemory& operator=(const CalcWitMemory&) = delete;
  FrElement* signals() const { return signals_; }
  Circom_Component* components() const { return components_; }
  // The signal array's bytes the first time it is asked (never touched yet), nothing afterwards.
  std::pair<void*, size_t> untouched_signals() {
    if (!untouched_) return {nullptr, 0};
    untouched_ = false;
    return {signals_, signal_bytes_};
  }

 private:
  FrElement* signals_ = nullptr;
  Circom_Component* components_ = nullptr;
  size_t n_components_ = 0;
  size_t signal_bytes_ = 0, component_bytes_ = 0;
  bool untouched_ = true;
};

// Has the kernel fault in byte ranges (writable, their contents left as they are:
// MADV_POPULATE_WRITE), one after the other, on a thread of its own while the computation runs on
// the caller's: a fresh process's first witness otherwise takes each page fault (a 2 MiB page
// zeroed, often a fault of the VM's host under it) in the middle of its arithmetic. Pages the
// computation reaches first it faults itself, as before. Joined on destruction; ranges below a few
// MB are not worth a thread, and without the kernel's support (Linux < 5.14) nothing is done.
class Prefault {
 public:
  explicit Prefault(std::vector<std::pair<void*, size_t>> ranges);
  ~Prefault();
  Prefault(const Prefault&) = delete;
  Prefault& operator=(const Prefault&) = delete;

 private:
  std::thread thread_;
};

class Circom_CalcWit {
 public:
  FrElement* signalValues;
  Circom_Component* componentMemory;
  FrElement* circuitConstants;
  const IOSignalInfoTable& templateInsId2IOSignalInfo;
  IOFieldDefPair* busInsId2FieldInfo;
  std::string* listOfTemplateMessages = nullptr;

  // circom's parallel components (threads) wait on these.
  std::mutex numThreadMutex;
  std::condition_variable ntcvs;
  int numThread = 0;
  int maxThread;

  // Uses `memory` (sized for this circuit) for the computation's signals and components.
  Circom_CalcWit(const Circom_Circuit& circuit, CalcWitMemory& memory, int max_threads);
  Circom_CalcWit(const Circom_CalcWit&) = delete;
  Circom_CalcWit& operator=(const Circom_CalcWit&) = delete;

  // The component path of `id_cmp` ("main.h[3].sigmaF[0]"), for assert messages.
  std::string getTrace(u64 id_cmp);
  std::string generate_position_array(uint* dimensions, uint size_dimensions, uint index);
};

typedef void (*Circom_TemplateFunction)(uint __cIdx, Circom_CalcWit* __ctx);

// The circuit's entry (circuit.cpp): creates and runs the main component.
void run(Circom_CalcWit* ctx);
