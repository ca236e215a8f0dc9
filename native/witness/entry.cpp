// The C entry points of a per-circuit witness library (cuzk_witness.h), in place of circom's
// main.cpp: the embedded .dat tables are parsed once (bounds-checked), inputs arrive as field
// elements (names hashed and values reduced by the caller), the witness goes straight into the
// caller's buffer, and every failure is a status with a message, never an exit or abort.
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <string>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "circom/calcwit.hpp"
#include "circom/circom.hpp"
#include "cuzk_witness.h"

extern "C" const uint8_t cuzk_witness_dat_begin[];
extern "C" const uint8_t cuzk_witness_dat_end[];

#if defined(CUZK_WITNESS_CURVE_BN254)
#define CUZK_WITNESS_CURVE CUZK_CURVE_BN254
#else
#define CUZK_WITNESS_CURVE CUZK_CURVE_BLS12_381
#endif

namespace cuzk::witness {

namespace {
thread_local std::ostringstream* current_log = nullptr;
}

std::ostream& log() {
  thread_local std::ostringstream fallback;  // a thread circom started for a parallel component
  return current_log ? *current_log : fallback;
}

void assert_failed(const char* condition) { throw AssertFailed{condition}; }

namespace {

struct Error {
  cuzk_status status;
  std::string message;
};

[[noreturn]] void fail(cuzk_status status, const char* format, ...) {
  char text[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(text, sizeof text, format, args);
  va_end(args);
  throw Error{status, text};
}

// The parsed tables, with the storage they point into (inner vectors: their data stays put when
// the outer one grows).
struct Circuit {
  Circom_Circuit tables;
  std::vector<HashSignalInfo> inputs;
  std::vector<u64> witness_signals;
  std::vector<FrElement> constants;
  std::vector<std::vector<IOFieldDef>> io_defs;
  std::vector<std::vector<u32>> io_lengths;
  std::vector<IOFieldDefPair> bus_fields;
  std::unordered_map<u64, size_t> input_by_hash;
  uint64_t n_input_values = 0;
};

// Reads the .dat layout circom's main.cpp reads, checking every size against the bytes there are.
class DatReader {
 public:
  DatReader(const uint8_t* begin, const uint8_t* end) : at_(begin), end_(end) {}
  void read(void* out, size_t bytes, const char* what) {
    if ((size_t)(end_ - at_) < bytes) fail(CUZK_ERR_FORMAT, "the embedded circuit tables end inside %s", what);
    std::memcpy(out, at_, bytes);
    at_ += bytes;
  }
  u32 u32_value(const char* what) {
    u32 v;
    read(&v, sizeof v, what);
    return v;
  }

 private:
  const uint8_t* at_;
  const uint8_t* end_;
};

// One IOFieldDef list (n entries of offset, len, lengths[len], size, busId).
void read_field_defs(DatReader& dat, Circuit& c, std::vector<IOFieldDef>& defs) {
  const u32 n = dat.u32_value("an io map entry");
  if (n > (1u << 24)) fail(CUZK_ERR_FORMAT, "an io map entry claims %u fields", n);
  defs.resize(n);
  for (u32 j = 0; j < n; j++) {
    defs[j].offset = dat.u32_value("an io field");
    defs[j].len = dat.u32_value("an io field");
    if (defs[j].len > (1u << 16)) fail(CUZK_ERR_FORMAT, "an io field claims %u dimensions", defs[j].len);
    c.io_lengths.emplace_back(defs[j].len);
    dat.read(c.io_lengths.back().data(), defs[j].len * sizeof(u32), "an io field's lengths");
    defs[j].lengths = c.io_lengths.back().data();
    defs[j].size = dat.u32_value("an io field");
    defs[j].busId = dat.u32_value("an io field");
  }
}

std::unique_ptr<Circuit> parse_circuit() {
  auto c = std::make_unique<Circuit>();
  DatReader dat(cuzk_witness_dat_begin, cuzk_witness_dat_end);
  c->inputs.resize(get_size_of_input_hashmap());
  dat.read(c->inputs.data(), c->inputs.size() * sizeof(HashSignalInfo), "the input hash map");
  c->witness_signals.resize(get_size_of_witness());
  dat.read(c->witness_signals.data(), c->witness_signals.size() * sizeof(u64), "the witness signal list");
  c->constants.resize(get_size_of_constants());
  dat.read(c->constants.data(), c->constants.size() * sizeof(FrElement), "the constants");
  for (FrElement& constant : c->constants) make_short_when_small(constant);
  if (get_size_of_io_map() > 0) {
    std::vector<u32> index(get_size_of_io_map());
    dat.read(index.data(), index.size() * sizeof(u32), "the io map index");
    c->io_defs.resize(index.size());
    for (size_t i = 0; i < index.size(); i++) {
      read_field_defs(dat, *c, c->io_defs[i]);
      c->tables.templateInsId2IOSignalInfo.set(index[i], IOFieldDefPair{(u32)c->io_defs[i].size(), c->io_defs[i].data()});
    }
    std::vector<std::vector<IOFieldDef>> bus(get_size_of_bus_field_map());
    c->bus_fields.resize(bus.size());
    for (size_t i = 0; i < bus.size(); i++) {
      c->io_defs.emplace_back();
      read_field_defs(dat, *c, c->io_defs.back());
      c->bus_fields[i] = IOFieldDefPair{(u32)c->io_defs.back().size(), c->io_defs.back().data()};
    }
  }
  // Every index circuit.cpp and this file follow must stay inside the signal array.
  const u64 n_signals = get_total_signal_no();
  for (u64 s : c->witness_signals)
    if (s >= n_signals) fail(CUZK_ERR_FORMAT, "the witness list names signal %llu of %llu", (unsigned long long)s, (unsigned long long)n_signals);
  const u64 first = get_main_input_signal_start(), last = first + get_main_input_signal_no();
  for (size_t i = 0; i < c->inputs.size(); i++) {
    const HashSignalInfo& in = c->inputs[i];
    if (in.hash == 0 && in.signalid == 0 && in.signalsize == 0) continue;  // an empty slot
    if (in.signalid < first || in.signalsize > last - in.signalid)
      fail(CUZK_ERR_FORMAT, "input %zu (signals %llu..+%llu) lies outside the main inputs", i, (unsigned long long)in.signalid,
           (unsigned long long)in.signalsize);
    c->input_by_hash[in.hash] = i;
    c->n_input_values += in.signalsize;
  }
  c->tables.InputHashMap = c->inputs.data();
  c->tables.witness2SignalList = c->witness_signals.data();
  c->tables.circuitConstants = c->constants.data();
  c->tables.busInsId2FieldInfo = c->bus_fields.data();
  return c;
}

// Parsed on first use; a malformed table is the same error for every call.
const Circuit& circuit() {
  struct Parsed {
    std::unique_ptr<Circuit> circuit;
    std::string error;
  };
  static const Parsed parsed = [] {
    try {
      return Parsed{parse_circuit(), ""};
    } catch (const Error& e) {
      return Parsed{nullptr, e.message};
    }
  }();
  if (!parsed.circuit) fail(CUZK_ERR_FORMAT, "%s", parsed.error.c_str());
  return *parsed.circuit;
}

// Standard-form limbs (a value read from the caller) as an element, checked against r.
FrElement input_element(const uint8_t* bytes, size_t name, size_t index) {
  FrElement e;
  e.shortVal = 0;
  e.type = Fr_LONG;
  std::memcpy(e.longVal, bytes, sizeof e.longVal);
  for (int i = Fr_N64 - 1; i >= 0; i--) {
    if (e.longVal[i] < Fr_q.longVal[i]) return e;
    if (e.longVal[i] > Fr_q.longVal[i]) break;
  }
  fail(CUZK_ERR_INVALID_ARGUMENT, "input %zu, value %zu is not below the field's prime", name, index);
}

// The last "Failed assert ..." line circuit.cpp printed, else everything it printed.
std::string assert_message(const std::string& log, const char* condition) {
  size_t at = log.rfind("Failed assert");
  std::string text = at == std::string::npos ? log : log.substr(at);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.empty()) text = std::string("assertion failed: ") + condition;
  return text;
}

// Memory of finished computations, kept for the next ones (at most kKeptMemories: each holds all
// signals and components of the circuit).
constexpr size_t kKeptMemories = 2;
std::mutex kept_mutex;
std::vector<std::unique_ptr<CalcWitMemory>> kept;

std::unique_ptr<CalcWitMemory> take_memory() {
  {
    std::lock_guard<std::mutex> lock(kept_mutex);
    if (!kept.empty()) {
      std::unique_ptr<CalcWitMemory> memory = std::move(kept.back());
      kept.pop_back();
      return memory;
    }
  }
  return std::make_unique<CalcWitMemory>(get_total_signal_no(), get_number_of_components());
}

// Gives `memory` back for reuse when it comes back on its own (RAII over one computation).
struct MemoryLease {
  std::unique_ptr<CalcWitMemory> memory = take_memory();
  ~MemoryLease() {
    std::lock_guard<std::mutex> lock(kept_mutex);
    if (kept.size() < kKeptMemories) kept.push_back(std::move(memory));
  }
};

void compute(const uint64_t* hashes, size_t n_names, const uint8_t* values, size_t n_values, uint8_t* out, size_t out_cap) {
  const Circuit& c = circuit();
  const size_t n_vars = c.witness_signals.size();
  if ((n_names > 0 && !hashes) || (n_values > 0 && !values) || !out) fail(CUZK_ERR_INVALID_ARGUMENT, "a NULL pointer");
  if (out_cap / 32 < n_vars) fail(CUZK_ERR_SHORT_BUFFER, "the witness needs %zu bytes; out holds %zu", n_vars * 32, out_cap);
  const unsigned threads = std::thread::hardware_concurrency();
  MemoryLease memory;
  // Memory never used before (a fresh process's first witness): its signals, then the output,
  // faulted in beside the computation; joined before the lease returns the memory. Later
  // computations find their signals mapped, and a fresh output costs them less than the thread.
  using Ranges = std::vector<std::pair<void*, size_t>>;
  const std::pair<void*, size_t> untouched = memory.memory->untouched_signals();
  Prefault prefault(untouched.first ? Ranges{untouched, {out, n_vars * 32}} : Ranges{});
  Circom_CalcWit ctx(c.tables, *memory.memory, threads == 0 ? 1 : (int)threads);
  std::vector<bool> assigned(c.inputs.size(), false);
  size_t used = 0;
  for (size_t i = 0; i < n_names; i++) {
    const auto found = c.input_by_hash.find(hashes[i]);
    if (found == c.input_by_hash.end()) fail(CUZK_ERR_INVALID_ARGUMENT, "input %zu (hash %016llx) is not an input of the circuit", i, (unsigned long long)hashes[i]);
    if (assigned[found->second]) fail(CUZK_ERR_INVALID_ARGUMENT, "input %zu is given twice", i);
    assigned[found->second] = true;
    const HashSignalInfo& in = c.inputs[found->second];
    if (in.signalsize > n_values - used) fail(CUZK_ERR_INVALID_ARGUMENT, "input %zu takes %llu values; %zu are left", i, (unsigned long long)in.signalsize, n_values - used);
    for (u64 j = 0; j < in.signalsize; j++) ctx.signalValues[in.signalid + j] = input_element(values + 32 * (used + j), i, j);
    used += in.signalsize;
  }
  if (used != n_values) fail(CUZK_ERR_INVALID_ARGUMENT, "%zu input values given; the inputs named take %zu", n_values, used);
  if (used != c.n_input_values) fail(CUZK_ERR_INVALID_ARGUMENT, "not all inputs have been set: %zu of %llu values", used, (unsigned long long)c.n_input_values);

  std::ostringstream log;
  current_log = &log;
  try {
    run(&ctx);
  } catch (const AssertFailed& failed) {
    current_log = nullptr;
    const std::string message = assert_message(log.str(), failed.condition);
    fail(CUZK_ERR_UNSATISFIED, "%s", message.c_str());
  } catch (...) {
    current_log = nullptr;
    throw;
  }
  current_log = nullptr;
  // circom's log() output: the circuit author asked for it.
  const std::string printed = log.str();
  if (!printed.empty()) std::fwrite(printed.data(), 1, printed.size(), stderr);

  // The witness's signals lie scattered over all of them (tens of MB): ask for each a few ahead.
  // A large witness is converted in two halves at once (each value on its own: nothing shared).
  const auto store = [&](size_t begin, size_t end) {
    constexpr size_t kAhead = 16;
    for (size_t i = begin; i < end; i++) {
      if (i + kAhead < end) __builtin_prefetch(&ctx.signalValues[c.witness_signals[i + kAhead]]);
      store_standard(&ctx.signalValues[c.witness_signals[i]], out + 32 * i);
    }
  };
  constexpr size_t kWorthAThread = size_t(1) << 16;  // values (~1 ms of conversion)
  const size_t half = threads >= 2 && n_vars >= kWorthAThread ? n_vars / 2 : n_vars;
  std::thread second;
  if (half < n_vars) {
    try {
      second = std::thread(store, half, n_vars);
    } catch (const std::system_error&) {
      store(half, n_vars);  // no thread to spare
    }
  }
  store(0, half);
  if (second.joinable()) second.join();
}

void write_message(char* err, size_t err_cap, const std::string& message) {
  if (!err || err_cap == 0) return;
  const size_t n = message.size() < err_cap - 1 ? message.size() : err_cap - 1;
  std::memcpy(err, message.data(), n);
  err[n] = 0;
}

// Runs `body`, turning every exception into a status and a message.
template <class Body>
cuzk_status guarded(char* err, size_t err_cap, Body body) {
  write_message(err, err_cap, "");
  try {
    body();
    return CUZK_OK;
  } catch (const Error& e) {
    write_message(err, err_cap, e.message);
    return e.status;
  } catch (const AssertFailed& failed) {
    write_message(err, err_cap, std::string("assertion failed: ") + failed.condition);
    return CUZK_ERR_UNSATISFIED;
  } catch (const std::bad_alloc&) {
    write_message(err, err_cap, "out of host memory");
    return CUZK_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    write_message(err, err_cap, std::string("internal error: ") + e.what());
    return CUZK_ERR_INTERNAL;
  } catch (...) {
    write_message(err, err_cap, "internal error: unknown exception");
    return CUZK_ERR_INTERNAL;
  }
}

}  // namespace
}  // namespace cuzk::witness

using namespace cuzk::witness;

extern "C" CUZK_API uint32_t cuzk_witness_abi_version(void) { return CUZK_WITNESS_ABI_VERSION; }

extern "C" CUZK_API cuzk_status cuzk_witness_info_get(cuzk_witness_info* out, char* err, size_t err_cap) {
  return guarded(err, err_cap, [&] {
    if (!out || out->struct_size < sizeof(cuzk_witness_info)) fail(CUZK_ERR_INVALID_ARGUMENT, "out NULL or struct_size < %zu", sizeof(cuzk_witness_info));
    const Circuit& c = circuit();
    out->curve = CUZK_WITNESS_CURVE;
    out->n_vars = c.witness_signals.size();
    out->n_signals = get_total_signal_no();
    out->n_input_values = (uint32_t)c.n_input_values;
    out->n_inputs = (uint32_t)c.input_by_hash.size();
    std::memcpy(out->prime, Fr_q.longVal, 32);
  });
}

extern "C" CUZK_API cuzk_status cuzk_witness_inputs(uint64_t* hashes, uint64_t* sizes, size_t cap, size_t* out_count, char* err,
                                                    size_t err_cap) {
  return guarded(err, err_cap, [&] {
    if (!out_count) fail(CUZK_ERR_INVALID_ARGUMENT, "out_count NULL");
    const Circuit& c = circuit();
    *out_count = c.input_by_hash.size();
    if (cap < *out_count) fail(CUZK_ERR_SHORT_BUFFER, "the circuit has %zu inputs; cap is %zu", *out_count, cap);
    if (*out_count > 0 && (!hashes || !sizes)) fail(CUZK_ERR_INVALID_ARGUMENT, "hashes or sizes NULL");
    size_t k = 0;
    for (const HashSignalInfo& in : c.inputs) {
      if (in.hash == 0 && in.signalid == 0 && in.signalsize == 0) continue;
      hashes[k] = in.hash;
      sizes[k] = in.signalsize;
      k++;
    }
  });
}

extern "C" CUZK_API cuzk_status cuzk_witness_compute(const uint64_t* hashes, size_t n_names, const uint8_t* values, size_t n_values,
                                                     uint8_t* out, size_t out_cap, char* err, size_t err_cap) {
  const cuzk_status status = guarded(err, err_cap, [&] { compute(hashes, n_names, values, n_values, out, out_cap); });
  if (status != CUZK_OK && out) std::memset(out, 0, out_cap);
  return status;
}
