// Fuzz target: a tuning database file with fuzzed bytes, opened with TuningDb and read back
// the way `orch tune` and `orch db` do (all, find, stats, CSV/JSON export, prune), and each
// record's stored configuration parsed back (halide_schedule_from_text, as the AOT build
// does). A damaged database must throw orch::Error or read as some records, never crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "codegen/halide/halide_backend.h"
#include "ir/error.h"
#include "profile/tuning_db.h"

namespace {

namespace fs = std::filesystem;

// One folder per fuzzing process (libFuzzer's -fork and -jobs run several), in memory when the
// machine has /dev/shm: every input is a file written, opened and deleted. Removed at exit.
struct WorkDir {
  fs::path path;
  WorkDir() {
    fs::path base = fs::is_directory("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    path = base / ("orch-fuzz-tuning-db-" + std::to_string(getpid()));
    fs::create_directories(path);
  }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const fs::path& work_dir() {
  static const WorkDir dir;
  return dir.path;
}

void read_back(const std::string& path) {
  orch::profile::TuningDb db(path);
  std::string sink;
  for (const orch::profile::TuningRecord& r : db.all()) {
    sink += orch::profile::to_csv(r) + orch::profile::to_json_line(r);
    for (const orch::profile::TuningRecord& f : db.find(r.kernel_hash, r.machine)) sink += f.config;
    try {
      sink += orch::codegen::halide_schedule_to_text(
          orch::codegen::halide_schedule_from_text(r.config));
    } catch (const orch::Error&) {
    }
  }
  db.stats();
  db.prune({.other_versions = true, .other_machines = false, .failed = true});
  db.stats();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = (work_dir() / "tuning.db").string();
  // SQLite's WAL files of the previous input would be replayed into this one.
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    read_back(path);
  } catch (const orch::Error&) {
  }
  return 0;
}
