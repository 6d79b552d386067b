#include "profile/tuning_db.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "ir/error.h"

namespace orch::profile {
namespace {

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS records (
  kernel_hash TEXT NOT NULL, outputs TEXT NOT NULL, machine TEXT NOT NULL,
  backend TEXT NOT NULL, config TEXT NOT NULL, version TEXT NOT NULL,
  ok INTEGER NOT NULL, reason TEXT NOT NULL,
  median_us REAL NOT NULL, min_us REAL NOT NULL, max_us REAL NOT NULL,
  runs INTEGER NOT NULL, compile_s REAL NOT NULL, timestamp INTEGER NOT NULL, label TEXT NOT NULL,
  recheck_us REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (kernel_hash, outputs, machine, backend, config, version));
CREATE TABLE IF NOT EXISTS searches (
  model_key TEXT NOT NULL, machine TEXT NOT NULL, version TEXT NOT NULL,
  lazy_seconds REAL NOT NULL, PRIMARY KEY (model_key, machine, version));
)";

constexpr const char* kColumns =
    "kernel_hash, outputs, machine, backend, config, version, ok, reason, median_us, min_us, "
    "max_us, runs, compile_s, timestamp, label, recheck_us";

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK)
      fail("tuning database: {} ({})", sqlite3_errmsg(db), sql);
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(int i, const std::string& text) {
    sqlite3_bind_text(stmt_, i, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int i, double value) { sqlite3_bind_double(stmt_, i, value); }
  void bind(int i, int64_t value) { sqlite3_bind_int64(stmt_, i, value); }

  // True while a row is available; throws on errors.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail("tuning database: {}", sqlite3_errmsg(db_));
  }
  void reset() { sqlite3_reset(stmt_); }
  std::string text(int i) const {
    const auto* p = sqlite3_column_text(stmt_, i);
    return p ? reinterpret_cast<const char*>(p) : "";
  }
  double real(int i) const { return sqlite3_column_double(stmt_, i); }
  int64_t integer(int i) const { return sqlite3_column_int64(stmt_, i); }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errmsg(db);
    sqlite3_free(message);
    fail("tuning database: {}", text);
  }
}

bool has_recheck_column(sqlite3* db) {
  Statement s(db, "SELECT COUNT(*) FROM pragma_table_info('records') WHERE name = 'recheck_us'");
  s.step();
  return s.integer(0) > 0;
}

// Databases written before rechecks lack the column: added, 0 (none) in every record. Another
// process may add it between the look and the ALTER; its error then means it is there.
void add_recheck_column(sqlite3* db) {
  if (has_recheck_column(db)) return;
  try {
    exec(db, "ALTER TABLE records ADD COLUMN recheck_us REAL NOT NULL DEFAULT 0");
  } catch (const Error&) {
    if (!has_recheck_column(db)) throw;
  }
}

TuningRecord read_record(const Statement& s) {
  TuningRecord r;
  r.kernel_hash = s.text(0);
  r.outputs = s.text(1);
  r.machine = s.text(2);
  r.backend = s.text(3);
  r.config = s.text(4);
  r.version = s.text(5);
  r.ok = s.integer(6) != 0;
  r.reason = s.text(7);
  r.median_us = s.real(8);
  r.min_us = s.real(9);
  r.max_us = s.real(10);
  r.runs = static_cast<int>(s.integer(11));
  r.compile_s = s.real(12);
  r.timestamp = s.integer(13);
  r.label = s.text(14);
  r.recheck_us = s.real(15);
  return r;
}

int64_t now_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

TuningDb::TuningDb(const std::string& path) : path_(path.empty() ? default_path() : path) {
  std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  if (sqlite3_open(path_.c_str(), &db_) != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    fail("tuning database '{}': {}", path_, message);
  }
  // Another tuning process may hold the write lock for a moment: wait rather than fail.
  sqlite3_busy_timeout(db_, 60000);
  try {
    exec(db_, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
    exec(db_, kSchema);
    add_recheck_column(db_);
  } catch (const Error& e) {
    sqlite3_close(db_);
    rethrow_with_context(e, fmt::format("'{}'", path_));
  }
}

TuningDb::~TuningDb() {
  sqlite3_close(db_);
}

void TuningDb::put(std::span<const TuningRecord> records) {
  exec(db_, "BEGIN IMMEDIATE");
  try {
    Statement s(
        db_, fmt::format("INSERT OR REPLACE INTO records ({}) VALUES "
                         "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
                         kColumns));
    for (const TuningRecord& r : records) {
      s.bind(1, r.kernel_hash);
      s.bind(2, r.outputs);
      s.bind(3, r.machine);
      s.bind(4, r.backend);
      s.bind(5, r.config);
      s.bind(6, r.version);
      s.bind(7, int64_t{r.ok ? 1 : 0});
      s.bind(8, r.reason);
      s.bind(9, r.median_us);
      s.bind(10, r.min_us);
      s.bind(11, r.max_us);
      s.bind(12, int64_t{r.runs});
      s.bind(13, r.compile_s);
      s.bind(14, r.timestamp == 0 ? now_seconds() : r.timestamp);
      s.bind(15, r.label);
      s.bind(16, r.recheck_us);
      s.step();
      s.reset();
    }
  } catch (...) {
    exec(db_, "ROLLBACK");
    throw;
  }
  exec(db_, "COMMIT");
}

std::vector<TuningRecord> TuningDb::find(const std::string& kernel_hash,
                                         const std::string& machine) const {
  Statement s(db_, fmt::format("SELECT {} FROM records WHERE kernel_hash = ?1 AND machine = ?2 "
                               "AND version = ?3 ORDER BY backend, config",
                               kColumns));
  s.bind(1, kernel_hash);
  s.bind(2, machine);
  s.bind(3, std::string(kOrchVersion));
  std::vector<TuningRecord> out;
  while (s.step()) out.push_back(read_record(s));
  return out;
}

double TuningDb::lazy_seconds(const std::string& model_key, const std::string& machine) const {
  Statement s(db_,
              "SELECT lazy_seconds FROM searches WHERE model_key = ?1 AND machine = ?2 AND "
              "version = ?3");
  s.bind(1, model_key);
  s.bind(2, machine);
  s.bind(3, std::string(kOrchVersion));
  return s.step() ? s.real(0) : 0.0;
}

void TuningDb::add_lazy_seconds(const std::string& model_key, const std::string& machine,
                                double seconds) {
  Statement s(db_,
              "INSERT INTO searches (model_key, machine, version, lazy_seconds) "
              "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (model_key, machine, version) "
              "DO UPDATE SET lazy_seconds = lazy_seconds + excluded.lazy_seconds");
  s.bind(1, model_key);
  s.bind(2, machine);
  s.bind(3, std::string(kOrchVersion));
  s.bind(4, seconds);
  s.step();
}

std::vector<TuningRecord> TuningDb::all() const {
  Statement s(
      db_, fmt::format("SELECT {} FROM records ORDER BY kernel_hash, backend, config", kColumns));
  std::vector<TuningRecord> out;
  while (s.step()) out.push_back(read_record(s));
  return out;
}

TuningDbStats TuningDb::stats() const {
  // ok counts as read_record reads it (non-zero): a summed column could overflow on a database
  // that something else wrote.
  Statement s(db_,
              "SELECT COUNT(*), COALESCE(SUM(ok != 0), 0), COUNT(DISTINCT kernel_hash), "
              "COUNT(DISTINCT machine), COUNT(DISTINCT version) FROM records");
  s.step();
  TuningDbStats stats;
  stats.records = s.integer(0);
  stats.ok = s.integer(1);
  stats.failed = stats.records - stats.ok;
  stats.kernels = s.integer(2);
  stats.machines = s.integer(3);
  stats.versions = s.integer(4);
  return stats;
}

int64_t TuningDb::prune(const PruneFilter& filter) {
  std::vector<std::string> conditions;
  if (filter.other_versions) conditions.push_back("version != ?1");
  if (filter.other_machines) conditions.push_back("machine != ?2");
  if (filter.failed) conditions.push_back("ok = 0");
  if (conditions.empty()) return 0;
  Statement s(db_, fmt::format("DELETE FROM records WHERE {}", fmt::join(conditions, " OR ")));
  s.bind(1, std::string(kOrchVersion));
  s.bind(2, machine_fingerprint());
  s.step();
  int64_t removed = sqlite3_changes(db_);
  // The spent search budgets assumed the removed records: the next tune searches afresh.
  if (removed > 0) exec(db_, "DELETE FROM searches");
  return removed;
}

std::string TuningDb::default_path() {
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return fmt::format("{}/orch/tuning.db", xdg);
  const char* home = std::getenv("HOME");
  return fmt::format("{}/.cache/orch/tuning.db", home && *home ? home : ".");
}

std::string machine_fingerprint() {
  std::string model = "unknown cpu";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::string caches;
  for (int i = 0; i < 8; ++i) {
    std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}", i);
    std::string size = read_first_line(dir + "/size");
    if (size.empty()) break;
    std::string type = read_first_line(dir + "/type");
    caches += fmt::format(" L{}{}={}", read_first_line(dir + "/level"),
                          type == "Data"          ? "d"
                          : type == "Instruction" ? "i"
                                                  : "",
                          size);
  }
  return fmt::format("{} x{}{}", model, std::thread::hardware_concurrency(), caches);
}

std::string csv_header() {
  return "kernel_hash,outputs,machine,backend,config,version,status,reason,median_us,min_us,"
         "max_us,runs,compile_s,timestamp,label,recheck_us";
}

std::string to_csv(const TuningRecord& r) {
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", r.kernel_hash,
                     csv_field(r.outputs), csv_field(r.machine), csv_field(r.backend),
                     csv_field(r.config), r.version, r.ok ? "ok" : "failed", csv_field(r.reason),
                     r.median_us, r.min_us, r.max_us, r.runs, r.compile_s, r.timestamp,
                     csv_field(r.label), r.recheck_us);
}

std::string to_json_line(const TuningRecord& r) {
  nlohmann::json j{{"kernel_hash", r.kernel_hash},
                   {"outputs", r.outputs},
                   {"machine", r.machine},
                   {"backend", r.backend},
                   {"config", r.config},
                   {"version", r.version},
                   {"status", r.ok ? "ok" : "failed"},
                   {"reason", r.reason},
                   {"median_us", r.median_us},
                   {"min_us", r.min_us},
                   {"max_us", r.max_us},
                   {"runs", r.runs},
                   {"compile_s", r.compile_s},
                   {"timestamp", r.timestamp},
                   {"label", r.label},
                   {"recheck_us", r.recheck_us}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace orch::profile
