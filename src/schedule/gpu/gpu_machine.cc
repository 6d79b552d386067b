// The GPU description (JSON), its view as a tile-search Machine, and detection through the CUDA
// driver API opened with dlopen.
#include "schedule/gpu/gpu_machine.h"

#include <dlfcn.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "ir/error.h"

namespace orch::schedule {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Reads the fields of a description, remembering which it used so that an unknown (misspelt)
// field is an error rather than a silently ignored number.
class FieldReader {
 public:
  explicit FieldReader(const Json& j) : j_(j) {}

  const Json& at(const char* key) {
    check(j_.contains(key), "gpu description: missing field '{}'", key);
    seen_.insert(key);
    return j_.at(key);
  }
  int64_t positive_int(const char* key) {
    const Json& v = at(key);
    check(v.is_number_integer(), "gpu description: '{}' must be an integer, got {}", key, v.dump());
    int64_t n = v.get<int64_t>();
    check(n > 0, "gpu description: '{}' must be > 0, got {}", key, n);
    return n;
  }
  // Counts that live in an int (threads, blocks, SMs).
  int small_int(const char* key) {
    int64_t n = positive_int(key);
    check(n <= std::numeric_limits<int>::max(), "gpu description: '{}' is too large: {}", key, n);
    return static_cast<int>(n);
  }
  double positive_number(const char* key) {
    const Json& v = at(key);
    check(v.is_number(), "gpu description: '{}' must be a number, got {}", key, v.dump());
    double x = v.get<double>();
    check(x > 0, "gpu description: '{}' must be > 0, got {}", key, x);
    return x;
  }
  std::string string(const char* key) {
    const Json& v = at(key);
    check(v.is_string(), "gpu description: '{}' must be a string, got {}", key, v.dump());
    return v.get<std::string>();
  }
  void reject_unknown() const {
    for (const auto& item : j_.items())
      check(seen_.count(item.key()) != 0, "gpu description: unknown field '{}'", item.key());
  }

 private:
  const Json& j_;
  std::set<std::string> seen_;
};

// Limits that contradict each other make every occupancy figure meaningless.
void check_limits(const GpuMachine& g) {
  check(g.shared_per_block <= g.shared_per_block_optin,
        "gpu description: 'shared_per_block' ({}) exceeds 'shared_per_block_optin' ({})",
        g.shared_per_block, g.shared_per_block_optin);
  check(g.shared_per_block_optin <= g.shared_per_sm,
        "gpu description: 'shared_per_block_optin' ({}) exceeds 'shared_per_sm' ({})",
        g.shared_per_block_optin, g.shared_per_sm);
  check(g.max_threads_per_block <= g.max_threads_per_sm,
        "gpu description: 'max_threads_per_block' ({}) exceeds 'max_threads_per_sm' ({})",
        g.max_threads_per_block, g.max_threads_per_sm);
  check(g.max_threads_per_block % g.warp_size == 0,
        "gpu description: 'max_threads_per_block' ({}) is not a multiple of 'warp_size' ({})",
        g.max_threads_per_block, g.warp_size);
  check(g.line_bytes % g.sector_bytes == 0,
        "gpu description: 'line_bytes' ({}) is not a multiple of 'sector_bytes' ({})", g.line_bytes,
        g.sector_bytes);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// CUdevice_attribute numbers (cuda.h; the runtime's cudaDeviceAttr uses the same values).
enum Attribute : int {
  kMaxThreadsPerBlock = 1,
  kSharedPerBlock = 8,
  kWarpSize = 10,
  kClockRateKhz = 13,
  kSmCount = 16,
  kMemoryClockKhz = 36,
  kMemoryBusBits = 37,
  kL2Bytes = 38,
  kMaxThreadsPerSm = 39,
  kCcMajor = 75,
  kCcMinor = 76,
  kSharedPerSm = 81,
  kRegistersPerSm = 82,
  kSharedPerBlockOptin = 97,
  kMaxBlocksPerSm = 106,
};

// The fp32 FMA lanes of one SM (CUDA C Programming Guide, arithmetic instruction throughput:
// 64 results per clock per SM on cc 6.0, 7.x and 8.0; 128 on the others since Maxwell).
int fp32_lanes(int major, int minor) {
  if (major == 7 || (major == 6 && minor == 0) || (major == 8 && minor == 0)) return 64;
  return 128;
}

// Bytes per clock: the L2 read bandwidth of the A100 (Ampere whitepaper: 5120 B/clk; no later
// figure is published, so it is assumed for later GPUs too) and one SM's shared memory (32 banks
// of 4 bytes).
constexpr double kL2BytesPerClock = 5120;
constexpr double kSharedBytesPerClock = 128;
// The CUDA C Programming Guide's limit for every compute capability since 3.5 (not an attribute).
constexpr int kMaxRegistersPerThread = 255;

// The CUDA driver entry points detect_gpu needs (CUresult is an int enum, CUdevice an int).
struct Driver {
  int (*init)(unsigned) = nullptr;
  int (*device_count)(int*) = nullptr;
  int (*device_get)(int*, int) = nullptr;
  int (*attribute)(int*, int, int) = nullptr;
  int (*name)(char*, int, int) = nullptr;
  int (*total_mem)(size_t*, int) = nullptr;
};

template <typename Fn>
bool load_symbol(void* handle, const char* symbol, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return fn != nullptr;
}

}  // namespace

std::string gpu_to_json(const GpuMachine& g) {
  Json j;
  j["name"] = g.name;
  j["compute_capability"] = fmt::format("{}.{}", g.cc_major, g.cc_minor);
  j["sm_count"] = g.sm_count;
  j["warp_size"] = g.warp_size;
  j["max_threads_per_block"] = g.max_threads_per_block;
  j["max_threads_per_sm"] = g.max_threads_per_sm;
  j["max_blocks_per_sm"] = g.max_blocks_per_sm;
  j["registers_per_sm"] = g.registers_per_sm;
  j["max_registers_per_thread"] = g.max_registers_per_thread;
  j["shared_per_block"] = g.shared_per_block;
  j["shared_per_block_optin"] = g.shared_per_block_optin;
  j["shared_per_sm"] = g.shared_per_sm;
  j["l2_bytes"] = g.l2_bytes;
  j["hbm_bytes"] = g.hbm_bytes;
  j["sector_bytes"] = g.sector_bytes;
  j["line_bytes"] = g.line_bytes;
  j["hbm_gbs"] = g.hbm_gbs;
  j["l2_gbs"] = g.l2_gbs;
  j["shared_gbs_per_sm"] = g.shared_gbs_per_sm;
  j["peak_fp32_gflops"] = g.peak_fp32_gflops;
  if (!g.sources.empty()) j["sources"] = g.sources;
  return j.dump(2) + "\n";
}

GpuMachine gpu_from_json(const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("gpu description: {}", e.what());
  }
  check(j.is_object(), "gpu description: expected an object, got {}", j.type_name());
  FieldReader r(j);
  GpuMachine g;
  g.name = r.string("name");
  std::string cc = r.string("compute_capability");
  char tail = 0;
  check(std::sscanf(cc.c_str(), "%d.%d%c", &g.cc_major, &g.cc_minor, &tail) == 2 &&
            g.cc_major > 0 && g.cc_minor >= 0,
        "gpu description: 'compute_capability' must look like \"9.0\", got \"{}\"", cc);
  g.sm_count = r.small_int("sm_count");
  g.warp_size = r.small_int("warp_size");
  g.max_threads_per_block = r.small_int("max_threads_per_block");
  g.max_threads_per_sm = r.small_int("max_threads_per_sm");
  g.max_blocks_per_sm = r.small_int("max_blocks_per_sm");
  g.registers_per_sm = r.positive_int("registers_per_sm");
  g.max_registers_per_thread = r.small_int("max_registers_per_thread");
  g.shared_per_block = r.positive_int("shared_per_block");
  g.shared_per_block_optin = r.positive_int("shared_per_block_optin");
  g.shared_per_sm = r.positive_int("shared_per_sm");
  g.l2_bytes = r.positive_int("l2_bytes");
  g.hbm_bytes = r.positive_int("hbm_bytes");
  g.sector_bytes = r.positive_int("sector_bytes");
  g.line_bytes = r.positive_int("line_bytes");
  g.hbm_gbs = r.positive_number("hbm_gbs");
  g.l2_gbs = r.positive_number("l2_gbs");
  g.shared_gbs_per_sm = r.positive_number("shared_gbs_per_sm");
  g.peak_fp32_gflops = r.positive_number("peak_fp32_gflops");
  if (j.contains("sources")) {
    const Json& sources = r.at("sources");
    check(sources.is_object(), "gpu description: 'sources' must be an object");
    for (const auto& item : sources.items()) {
      check(item.value().is_string(), "gpu description: 'sources.{}' must be a string", item.key());
      g.sources[item.key()] = item.value().get<std::string>();
    }
  }
  r.reject_unknown();
  check_limits(g);
  return g;
}

GpuMachine load_gpu(const std::string& path) {
  check(fs::exists(path), "gpu description {}: no such file", path);
  try {
    return gpu_from_json(read_text(path));
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
}

void save_gpu(const GpuMachine& gpu, const std::string& path) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path);
  check(out.good(), "cannot write {}", path);
  out << gpu_to_json(gpu);
}

Machine to_machine(const GpuMachine& g) {
  Machine m;
  m.name = g.name;
  m.kind = "gpu";
  m.cores = g.sm_count;
  // A warp's 32 lanes of 4-byte registers act as one vector.
  m.simd_bytes = g.warp_size * 4;
  // No register bandwidth is published: an SM's FMAs at peak read three 4-byte operands each.
  double register_gbs = g.peak_fp32_gflops / 2 / g.sm_count * 12;
  m.levels = {
      // The register file of one SM; a block may use all of it.
      {"reg", g.registers_per_sm * 4, 4, register_gbs, false},
      // What one block (one tile) may stage, with the opt-in; rows of 128 bytes serve a warp's
      // 32 banks in one pass.
      {"smem", g.shared_per_block_optin, g.line_bytes, g.shared_gbs_per_sm, false},
      // Shared by the SMs; filled from HBM and read by the SMs in 32-byte sectors.
      {"L2", g.l2_bytes, g.sector_bytes, g.l2_gbs, true},
      {"HBM", 0, g.sector_bytes, g.hbm_gbs, true},
  };
  return m;
}

std::optional<GpuMachine> gpu_from_attributes(const std::string& name, int64_t total_memory,
                                              const GpuAttributeFn& attribute) {
  GpuMachine g;
  g.name = name;
  bool ok = total_memory > 0;
  auto get = [&](int a) -> int64_t {
    std::optional<int64_t> v = attribute(a);
    // Every attribute is a positive count or size, except a minor version of 0.
    bool valid = v.has_value() && (*v > 0 || (a == kCcMinor && *v == 0));
    ok = ok && valid;
    return valid ? *v : 0;
  };
  g.cc_major = static_cast<int>(get(kCcMajor));
  g.cc_minor = static_cast<int>(get(kCcMinor));
  g.sm_count = static_cast<int>(get(kSmCount));
  g.warp_size = static_cast<int>(get(kWarpSize));
  g.max_threads_per_block = static_cast<int>(get(kMaxThreadsPerBlock));
  g.max_threads_per_sm = static_cast<int>(get(kMaxThreadsPerSm));
  g.max_blocks_per_sm = static_cast<int>(get(kMaxBlocksPerSm));
  g.registers_per_sm = get(kRegistersPerSm);
  g.max_registers_per_thread = kMaxRegistersPerThread;
  g.shared_per_block = get(kSharedPerBlock);
  g.shared_per_block_optin = get(kSharedPerBlockOptin);
  g.shared_per_sm = get(kSharedPerSm);
  g.l2_bytes = get(kL2Bytes);
  g.hbm_bytes = total_memory;
  double clock_khz = static_cast<double>(get(kClockRateKhz));
  double memory_khz = static_cast<double>(get(kMemoryClockKhz));
  double bus_bits = static_cast<double>(get(kMemoryBusBits));
  if (!ok) return std::nullopt;
  // HBM transfers on both clock edges: 2 * clock * bus width.
  g.hbm_gbs = 2 * memory_khz * 1e3 * bus_bits / 8 / 1e9;
  g.l2_gbs = kL2BytesPerClock * clock_khz * 1e3 / 1e9;
  g.shared_gbs_per_sm = kSharedBytesPerClock * clock_khz * 1e3 / 1e9;
  g.peak_fp32_gflops = g.sm_count * fp32_lanes(g.cc_major, g.cc_minor) * 2 * clock_khz * 1e3 / 1e9;
  g.sources = {{"*", "CUDA driver attributes (cuDeviceGetAttribute)"},
               {"max_registers_per_thread", "CUDA C Programming Guide, compute capability table"},
               {"hbm_gbs", "derived: 2 x memory clock x bus width"},
               {"l2_gbs", "derived: 5120 B/clk (Ampere whitepaper) x SM clock"},
               {"shared_gbs_per_sm", "derived: 32 banks x 4 B x SM clock"},
               {"peak_fp32_gflops", "derived: SMs x fp32 lanes x 2 x SM clock"}};
  try {
    check_limits(g);
  } catch (const Error&) {
    return std::nullopt;
  }
  return g;
}

std::optional<GpuMachine> detect_gpu(int device) {
  void* handle = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) handle = dlopen("libcuda.so", RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return std::nullopt;
  // The driver stays loaded: unloading it after cuInit is not supported.
  Driver d;
  if (!load_symbol(handle, "cuInit", d.init) ||
      !load_symbol(handle, "cuDeviceGetCount", d.device_count) ||
      !load_symbol(handle, "cuDeviceGet", d.device_get) ||
      !load_symbol(handle, "cuDeviceGetAttribute", d.attribute) ||
      !load_symbol(handle, "cuDeviceGetName", d.name) ||
      !load_symbol(handle, "cuDeviceTotalMem_v2", d.total_mem))
    return std::nullopt;
  int count = 0, dev = 0;
  if (d.init(0) != 0 || d.device_count(&count) != 0 || device < 0 || device >= count ||
      d.device_get(&dev, device) != 0)
    return std::nullopt;
  char name[256] = {};
  size_t total = 0;
  if (d.name(name, sizeof(name) - 1, dev) != 0 || d.total_mem(&total, dev) != 0)
    return std::nullopt;
  return gpu_from_attributes(name, static_cast<int64_t>(total), [&](int a) {
    int value = 0;
    return d.attribute(&value, a, dev) == 0 ? std::optional<int64_t>(value) : std::nullopt;
  });
}

}  // namespace orch::schedule
