// The GPU machine model (issue #15): what Welder's GPU tile configs are checked and ranked
// against. Read from the CUDA driver when a GPU is present (detect_gpu, loaded with dlopen: no
// build-time CUDA dependency), otherwise from a description file; machines/h200.json and
// machines/a100.json carry the published numbers with their sources.
//
//   {"name": "H200-SXM", "compute_capability": "9.0", "sm_count": 132, "warp_size": 32,
//    "max_threads_per_block": 1024, "max_threads_per_sm": 2048, "max_blocks_per_sm": 32,
//    "registers_per_sm": 65536, "max_registers_per_thread": 255,
//    "shared_per_block": 49152, "shared_per_block_optin": 232448, "shared_per_sm": 233472,
//    "l2_bytes": 52428800, "hbm_bytes": 141000000000, "sector_bytes": 32, "line_bytes": 128,
//    "hbm_gbs": 4800, "l2_gbs": 10138, "shared_gbs_per_sm": 253.4, "peak_fp32_gflops": 67000,
//    "sources": {"sm_count": "H100 whitepaper: ...", ...}}
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "schedule/machine.h"

namespace orch::schedule {

/// One GPU: the limits a kernel launch must respect and the rates the cost model uses.
struct GpuMachine {
  std::string name;
  int cc_major = 0;  // compute capability, e.g. 9.0
  int cc_minor = 0;
  int sm_count = 0;
  int warp_size = 32;
  int max_threads_per_block = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  int64_t registers_per_sm = 0;  // 32-bit registers
  int max_registers_per_thread = 0;
  int64_t shared_per_block = 0;        // bytes a block gets without opting in (48 KiB)
  int64_t shared_per_block_optin = 0;  // bytes a block may opt in to (dynamic shared memory)
  int64_t shared_per_sm = 0;
  int64_t l2_bytes = 0;
  int64_t hbm_bytes = 0;
  int64_t sector_bytes = 32;     // the unit of a global memory transaction
  int64_t line_bytes = 128;      // an L1/L2 cache line (four sectors)
  double hbm_gbs = 0;            // device memory bandwidth, GB/s
  double l2_gbs = 0;             // L2 read bandwidth of all SMs together, GB/s
  double shared_gbs_per_sm = 0;  // shared memory bandwidth of one SM, GB/s
  double peak_fp32_gflops = 0;   // fp32 FMA peak (2 FLOPs per FMA), GFLOP/s
  /// Where each number comes from (field -> citation); kept through load and save.
  std::map<std::string, std::string> sources;
  bool operator==(const GpuMachine&) const = default;
};

/// JSON text of a GPU description, and back. Errors name the field: a missing, unknown,
/// mistyped, zero or negative field, or limits that contradict each other.
std::string gpu_to_json(const GpuMachine& gpu);
GpuMachine gpu_from_json(const std::string& text);

/// Loads a description file (errors name the file); saves one.
GpuMachine load_gpu(const std::string& path);
void save_gpu(const GpuMachine& gpu, const std::string& path);

/// The tile search's view of a GPU (kind "gpu", cores = SMs): levels registers (per SM),
/// shared memory (what one block may use), L2 (shared by the SMs) and HBM, each with the
/// transfer size and bandwidth it has on this GPU.
Machine to_machine(const GpuMachine& gpu);

/// Answers one CUdevice_attribute number for the device, or nullopt when the query fails.
using GpuAttributeFn = std::function<std::optional<int64_t>(int attribute)>;

/// A GpuMachine from device attribute queries (the CUDA driver's numbers) plus what the driver
/// does not report (derived rates, documented in the .cc); nullopt when a required attribute is
/// missing. Split from detect_gpu so it can be tested without a GPU.
std::optional<GpuMachine> gpu_from_attributes(const std::string& name, int64_t total_memory,
                                              const GpuAttributeFn& attribute);

/// The GPU `device` of this machine through the CUDA driver API (libcuda.so.1, opened at run
/// time); nullopt when there is no driver, no such device, or any call fails.
std::optional<GpuMachine> detect_gpu(int device = 0);

}  // namespace orch::schedule
