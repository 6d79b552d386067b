// Machine detection (sysfs, /proc/cpuinfo), the bandwidth probe and the JSON description.
#include "schedule/machine.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "ir/error.h"

namespace orch::schedule {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// "48K" / "2048K" / "32M" -> bytes.
int64_t parse_size(const std::string& text) {
  if (text.empty()) return 0;
  int64_t n = std::atoll(text.c_str());
  char unit = text.back();
  if (unit == 'K') return n << 10;
  if (unit == 'M') return n << 20;
  if (unit == 'G') return n << 30;
  return n;
}

int simd_bytes_from_cpuinfo() {
  std::string info = read_text("/proc/cpuinfo");
  auto has = [&](const char* flag) { return info.find(flag) != std::string::npos; };
  if (has(" avx512f")) return 64;
  if (has(" avx2") || has(" avx ")) return 32;
  return 16;  // SSE2 on x86-64, NEON/ASIMD on aarch64
}

// Sums `bytes` of doubles repeatedly for about `seconds`; returns GB/s of the best pass.
double read_bandwidth(int64_t bytes, double seconds) {
  size_t n = std::max<size_t>(static_cast<size_t>(bytes) / sizeof(double), 512);
  std::vector<double> data(n, 1.0);
  volatile double sink = 0;
  double best = 0;
  auto start = std::chrono::steady_clock::now();
  for (int pass = 0; pass < 1000; ++pass) {
    auto t0 = std::chrono::steady_clock::now();
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (size_t i = 0; i + 3 < n; i += 4) {
      s0 += data[i];
      s1 += data[i + 1];
      s2 += data[i + 2];
      s3 += data[i + 3];
    }
    sink = sink + s0 + s1 + s2 + s3;
    auto t1 = std::chrono::steady_clock::now();
    double dt = std::chrono::duration<double>(t1 - t0).count();
    if (dt > 0) best = std::max(best, static_cast<double>(n * sizeof(double)) / dt / 1e9);
    if (std::chrono::duration<double>(t1 - start).count() > seconds && pass >= 2) break;
  }
  return best;
}

// Every core sums its own share of `bytes` at the same time; returns the sum of their
// bandwidths (a parallel kernel's view of a shared level).
double parallel_read_bandwidth(int64_t bytes, int cores, double seconds) {
  std::vector<double> each(static_cast<size_t>(std::max(cores, 1)));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < each.size(); ++t)
    threads.emplace_back([&, t] { each[t] = read_bandwidth(bytes / std::max(cores, 1), seconds); });
  for (std::thread& t : threads) t.join();
  double total = 0;
  for (double b : each) total += b;
  return total;
}

}  // namespace

int64_t Machine::tile_capacity(size_t level) const {
  const MemoryLevel& l = levels.at(level);
  if (l.capacity == 0) return 0;
  return l.shared ? l.capacity / std::max(cores, 1) : l.capacity;
}

Machine detect_machine() {
  Machine m;
  m.name = "host";
  m.cores = static_cast<int>(std::max<long>(sysconf(_SC_NPROCESSORS_ONLN), 1));
  m.simd_bytes = simd_bytes_from_cpuinfo();
  m.levels.push_back({"reg", 16 * m.simd_bytes, m.simd_bytes, 400, false});
  std::vector<MemoryLevel> caches;
  fs::path dir = "/sys/devices/system/cpu/cpu0/cache";
  for (int i = 0; i < 16; ++i) {
    fs::path index = dir / ("index" + std::to_string(i));
    if (!fs::exists(index)) break;
    if (read_text(index / "type") == "Instruction") continue;
    int level = std::atoi(read_text(index / "level").c_str());
    std::string shared = read_text(index / "shared_cpu_list");
    MemoryLevel c{
        fmt::format("L{}", level), parse_size(read_text(index / "size")),
        std::max<int64_t>(std::atoll(read_text(index / "coherency_line_size").c_str()), 1),
        200.0 / level, level >= 3};
    if (c.capacity > 0) caches.push_back(c);
  }
  if (caches.empty()) {
    caches = {{"L1", 32 << 10, 64, 200, false}, {"L2", 1 << 20, 64, 100, false}};
  }
  std::sort(caches.begin(), caches.end(),
            [](const MemoryLevel& a, const MemoryLevel& b) { return a.name < b.name; });
  m.levels.insert(m.levels.end(), caches.begin(), caches.end());
  m.levels.push_back({"DRAM", 0, caches.back().line, 10, true});
  return m;
}

void probe_bandwidths(Machine& m, double seconds_per_level) {
  int64_t largest = 0;
  for (size_t i = 1; i < m.levels.size(); ++i) {
    MemoryLevel& l = m.levels[i];
    // Half a cache keeps the buffer resident; main memory gets 4x the largest cache.
    int64_t bytes = l.capacity > 0 ? l.capacity / 2 : std::max<int64_t>(4 * largest, 64 << 20);
    largest = std::max(largest, l.capacity);
    l.bandwidth_gbs = l.shared ? parallel_read_bandwidth(bytes, m.cores, seconds_per_level)
                               : read_bandwidth(bytes, seconds_per_level);
  }
  if (m.levels.size() > 1) m.levels[0].bandwidth_gbs = 2 * m.levels[1].bandwidth_gbs;
}

std::string machine_to_json(const Machine& m) {
  nlohmann::json levels = nlohmann::json::array();
  for (const MemoryLevel& l : m.levels)
    levels.push_back({{"name", l.name},
                      {"capacity", l.capacity},
                      {"line", l.line},
                      {"bandwidth_gbs", l.bandwidth_gbs},
                      {"shared", l.shared}});
  nlohmann::json j = {{"name", m.name},
                      {"kind", m.kind},
                      {"cores", m.cores},
                      {"simd_bytes", m.simd_bytes},
                      {"levels", levels}};
  return j.dump(2) + "\n";
}

Machine machine_from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("machine description: {}", e.what());
  }
  auto field = [](const nlohmann::json& obj, const char* key, const char* where) {
    check(obj.is_object() && obj.contains(key), "machine description: {} needs '{}'", where, key);
    return obj.at(key);
  };
  Machine m;
  try {
    m.name = j.value("name", std::string("machine"));
    m.kind = j.value("kind", std::string("cpu"));
    m.cores = field(j, "cores", "the machine").get<int>();
    m.simd_bytes = j.value("simd_bytes", 16);
    for (const nlohmann::json& l : field(j, "levels", "the machine")) {
      MemoryLevel level;
      level.name = field(l, "name", "a level").get<std::string>();
      level.capacity = field(l, "capacity", "a level").get<int64_t>();
      level.line = l.value("line", int64_t{64});
      level.bandwidth_gbs = field(l, "bandwidth_gbs", "a level").get<double>();
      level.shared = l.value("shared", false);
      m.levels.push_back(level);
    }
  } catch (const nlohmann::json::exception& e) {
    fail("machine description: {}", e.what());
  }
  check(m.cores >= 1, "machine description: cores must be >= 1, got {}", m.cores);
  check(m.levels.size() >= 2, "machine description: needs at least 2 levels, got {}",
        m.levels.size());
  for (const MemoryLevel& l : m.levels)
    check(l.line >= 1 && l.bandwidth_gbs > 0 && l.capacity >= 0,
          "machine description: level '{}' needs line >= 1, bandwidth > 0, capacity >= 0", l.name);
  check(m.levels.back().capacity == 0,
        "machine description: the last level '{}' is main memory and must have capacity 0",
        m.levels.back().name);
  return m;
}

Machine load_machine(const std::string& path) {
  check(fs::exists(path), "machine description {}: no such file", path);
  try {
    return machine_from_json(read_text(path));
  } catch (const Error& e) {
    rethrow_with_context(e, path);
  }
}

void save_machine(const Machine& machine, const std::string& path) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  std::ofstream out(path);
  check(out.good(), "cannot write {}", path);
  out << machine_to_json(machine);
}

std::string machine_cache_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0')
    return (fs::path(xdg) / "orch" / "machine.json").string();
  const char* home = std::getenv("HOME");
  return (fs::path(home != nullptr ? home : "/tmp") / ".cache" / "orch" / "machine.json").string();
}

Machine host_machine(const std::string& override_path) {
  if (!override_path.empty()) return load_machine(override_path);
  std::string cache = machine_cache_path();
  if (fs::exists(cache)) return load_machine(cache);
  Machine m = detect_machine();
  probe_bandwidths(m);
  try {
    save_machine(m, cache);
  } catch (const Error&) {
    // An unwritable cache only costs a re-probe next time.
  }
  return m;
}

}  // namespace orch::schedule
