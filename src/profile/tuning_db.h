// The tuning database: every measurement of a candidate kernel, in SQLite, so that tuning is
// resumable after any interruption and a second run measures nothing.
//
// A record is keyed by (kernel hash, output set, machine fingerprint, backend, config, orch
// version). The kernel hash is structural_hash(kernel, /*contents=*/false): latency does not
// depend on weight values, so repeated layers share their records. Each record is committed in
// its own transaction as soon as it is measured; the database runs in WAL mode with a busy
// timeout, so two tuning processes may write at once and `kill -9` loses at most the
// measurements in flight.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct sqlite3;

namespace orch::profile {

/// orch's version, part of every key (a new version re-measures). 0.2.1: the check before
/// timing no longer fails kernels whose outputs hold equal infinities (stored failures are stale).
/// 0.2.2: Halide's tanh, sinh and cosh vectorize (stored times of kernels with them are stale).
/// 0.2.3: oneDNN convolutions are also measured in the plain layout (a stored kernel never was).
/// 0.2.4: a oneDNN convolution adds its per-channel bias itself (stored times of such kernels
/// are stale). 0.2.5: a oneDNN MatMul with constant weights is also measured with them stored
/// column-major (a stored kernel never was). 0.2.6: Halide's f32 sigmoid has its own exp (stored
/// times of kernels with a sigmoid are 10-20% high). 0.2.7: Halide's Pad and Resize ask a tile of
/// their producer for the rows they read (stored times of kernels with a producer computed per
/// tile before either were up to 25x high). 0.2.8: Halide's Resize by an integer ratio indexes
/// without gathers, and the tile search keeps an expensive value that its consumer reads more
/// than once (stored times of kernels with a Resize were up to 8x high).
inline constexpr const char* kOrchVersion = "0.2.8";

/// One measurement of one kernel with one backend configuration.
struct TuningRecord {
  std::string kernel_hash;  // format_hash(structural_hash(kernel, false))
  std::string outputs;      // the kernel's output types, "f32[1,64];f32[1,64]"
  std::string machine;      // machine_fingerprint()
  std::string backend;      // "halide", "dnnl", "reference" (or a test backend)
  std::string config;       // the backend's configuration text; "" for its default
  std::string version = kOrchVersion;
  bool ok = false;
  std::string reason;  // why it failed ("" when ok)
  double median_us = 0;
  double min_us = 0;
  double max_us = 0;
  int runs = 0;
  double compile_s = 0;
  int64_t timestamp = 0;  // seconds since the epoch; 0: now, when stored
  std::string label;      // the kernel's primitives, for people ("Add #3 + Relu #4")
  /// A second measurement, taken because a plan chose this configuration (driver/tune.cc's
  /// recheck); 0: none. When set, it is the record's time.
  double recheck_us = 0;
};

/// Counts for `orch db stats`.
struct TuningDbStats {
  int64_t records = 0;
  int64_t ok = 0;
  int64_t failed = 0;
  int64_t kernels = 0;   // distinct kernel hashes
  int64_t machines = 0;  // distinct fingerprints
  int64_t versions = 0;  // distinct orch versions
};

/// Which records `prune` removes.
struct PruneFilter {
  bool other_versions = false;  // version != kOrchVersion
  bool other_machines = false;  // machine != machine_fingerprint()
  bool failed = false;          // failed records (they are measured again next time)
};

/// An open tuning database.
class TuningDb {
 public:
  /// Opens (creating the file, its folder and the table when missing) the database at `path`;
  /// "" opens default_path(). Throws Error naming the path on failure.
  explicit TuningDb(const std::string& path = "");
  ~TuningDb();
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  const std::string& path() const { return path_; }

  /// Stores `records` in one transaction (a record with the same key is replaced).
  void put(std::span<const TuningRecord> records);

  /// The records of `kernel_hash` measured on `machine` by this orch version.
  std::vector<TuningRecord> find(const std::string& kernel_hash, const std::string& machine) const;

  /// Every record, ordered by kernel hash, backend and config.
  std::vector<TuningRecord> all() const;

  TuningDbStats stats() const;

  /// Removes the records `filter` selects; returns how many.
  int64_t prune(const PruneFilter& filter);

  /// Seconds earlier runs' lazy searches spent on the model `model_key` measured on `machine`
  /// with this orch version (0 when none): a rerun spends only what --max-lazy-s leaves, so
  /// tuning a model again measures nothing once its budget is spent.
  double lazy_seconds(const std::string& model_key, const std::string& machine) const;
  void add_lazy_seconds(const std::string& model_key, const std::string& machine, double seconds);

  /// $XDG_CACHE_HOME/orch/tuning.db, or ~/.cache/orch/tuning.db.
  static std::string default_path();

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

/// This machine's identity for the database: CPU model, core count and cache sizes.
std::string machine_fingerprint();

/// A record as CSV (with `csv_header()`), or as one JSON object on one line.
std::string csv_header();
std::string to_csv(const TuningRecord& record);
std::string to_json_line(const TuningRecord& record);

}  // namespace orch::profile
