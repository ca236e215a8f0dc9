// The per-computation state of circom's generated code (circom/calcwit.hpp): signal values and
// component slots, made fresh for each computation over the circuit's shared tables.
#include "circom/calcwit.hpp"

Circom_CalcWit::Circom_CalcWit(const Circom_Circuit& circuit, int max_threads)
    : signalValues(new FrElement[get_total_signal_no()]),
      componentMemory(nullptr),
      circuitConstants(circuit.circuitConstants),
      templateInsId2IOSignalInfo(circuit.templateInsId2IOSignalInfo),
      busInsId2FieldInfo(circuit.busInsId2FieldInfo),
      maxThread(max_threads) {
  try {
    componentMemory = new Circom_Component[get_number_of_components()];
  } catch (...) {
    delete[] signalValues;
    throw;
  }
  // Signal 0 is the constant 1.
  signalValues[0].shortVal = 1;
  signalValues[0].type = Fr_SHORT;
}

Circom_CalcWit::~Circom_CalcWit() {
  // circuit.cpp frees each component's arrays when the component is done; a computation stopped
  // by a failed assert leaves those of the components still running (a few bytes each).
  delete[] componentMemory;
  delete[] signalValues;
}

std::string Circom_CalcWit::getTrace(u64 id_cmp) {
  std::string trace = componentMemory[id_cmp].componentName;
  for (u64 id = id_cmp; id != 0;) {
    id = componentMemory[id].idFather;
    trace = componentMemory[id].componentName + "." + trace;
  }
  return trace;
}

std::string Circom_CalcWit::generate_position_array(uint* dimensions, uint size_dimensions, uint index) {
  std::string positions;
  for (uint i = 0; i < size_dimensions; i++) {
    const uint last = index % dimensions[size_dimensions - 1 - i];
    index /= dimensions[size_dimensions - 1 - i];
    positions = "[" + std::to_string(last) + "]" + positions;
  }
  return positions;
}
