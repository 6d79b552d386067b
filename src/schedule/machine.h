// The machine model the tile search ranks against: memory levels from the fastest (registers)
// to the slowest (main memory), each with a capacity, a line size and a bandwidth, plus the
// number of cores and the SIMD width. A CPU is read from sysfs and /proc/cpuinfo with bandwidths
// from a short STREAM-like probe; a description file (JSON) overrides everything, so tests are
// deterministic and a GPU (registers / shared memory / global memory, transaction size, SM count)
// is described with the same structure.
//
//   {"name": "test", "kind": "cpu", "cores": 4, "simd_bytes": 32,
//    "levels": [{"name": "reg", "capacity": 512, "line": 32, "bandwidth_gbs": 400},
//               {"name": "L1", "capacity": 32768, "line": 64, "bandwidth_gbs": 200}, ...,
//               {"name": "DRAM", "capacity": 0, "line": 64, "bandwidth_gbs": 20}]}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace orch::schedule {

/// One level of the memory hierarchy.
struct MemoryLevel {
  std::string name;
  int64_t capacity = 0;  // bytes; 0 for unbounded (main memory)
  int64_t line = 64;     // bytes moved per transfer from the next slower level
  // Read bandwidth: of one core for a private level, of all cores together for a shared one.
  double bandwidth_gbs = 1;
  bool shared = false;  // shared by all cores: each core's tile gets capacity / cores
  bool operator==(const MemoryLevel&) const = default;
};

/// A machine: levels fastest first; the last level is main (global) memory.
struct Machine {
  std::string name;
  std::string kind = "cpu";  // "cpu" or "gpu"
  int cores = 1;             // cores, or streaming multiprocessors on a GPU
  int simd_bytes = 16;       // vector register width
  std::vector<MemoryLevel> levels;
  bool operator==(const Machine&) const = default;

  /// The bytes one tile may use at `level` (a shared level is split between the cores).
  int64_t tile_capacity(size_t level) const;
};

/// Reads the caches (sysfs), cores and SIMD width (/proc/cpuinfo) of this CPU; bandwidths are
/// left at rough defaults until probe_bandwidths fills them.
Machine detect_machine();

/// Measures each level's read bandwidth with a STREAM-like sum over a buffer sized for it
/// (about `seconds_per_level` each): one core for a private level, every core at once on its own
/// buffer for a shared one (what a parallel kernel gets); registers are taken as twice L1.
void probe_bandwidths(Machine& machine, double seconds_per_level = 0.05);

/// JSON text of a machine description, and back. Parsing errors name the field.
std::string machine_to_json(const Machine& machine);
Machine machine_from_json(const std::string& text);

/// Loads a description file; throws Error naming the file.
Machine load_machine(const std::string& path);
void save_machine(const Machine& machine, const std::string& path);

/// The file detect + probe results are cached in: $XDG_CACHE_HOME/orch/machine.json or
/// ~/.cache/orch/machine.json.
std::string machine_cache_path();

/// This machine: `override_path` when given, otherwise the cached description, otherwise
/// detect + probe (once; the result is written to the cache file).
Machine host_machine(const std::string& override_path = "");

}  // namespace orch::schedule
