// The structural hash without constant contents, and the tuning database.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>

#include "ir/error.h"
#include "ir/hash.h"
#include "ir/text_format.h"
#include "profile/tuning_db.h"

namespace orch {
namespace {

Graph dense(const std::string& weights, const std::string& shape) {
  return parse_graph(fmt::format(R"(graph main(%x: f32[2,{0}]) {{
  const %w = f32[{0},2]{{{1}}}
  %y: f32[2,2] = MatMul(%x, %w)
  return %y
}})",
                                 shape, weights));
}

TEST(ProfileHash, WeightsDoNotCountShapesDo) {
  Graph a = dense("1, 2, 3, 4", "2");
  Graph b = dense("5, 6, 7, 8", "2");
  Graph c = dense("1, 2, 3, 4, 5, 6", "3");
  EXPECT_EQ(structural_hash(a, false), structural_hash(b, false));
  EXPECT_NE(structural_hash(a, true), structural_hash(b, true));
  EXPECT_NE(structural_hash(a, false), structural_hash(c, false));
  // The original function is the contents-included variant.
  EXPECT_EQ(structural_hash(a), structural_hash(a, true));
}

class TuningDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / fmt::format("orch_db_{}", getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path() const { return (dir_ / "sub" / "tuning.db").string(); }
  std::filesystem::path dir_;
};

profile::TuningRecord record(const std::string& hash, const std::string& backend, bool ok,
                             double us) {
  return {.kernel_hash = hash,
          .outputs = "f32[2]",
          .machine = profile::machine_fingerprint(),
          .backend = backend,
          .ok = ok,
          .reason = ok ? "" : "crashed: SIGSEGV",
          .median_us = us,
          .runs = 3,
          .label = "Add #0"};
}

TEST_F(TuningDbTest, StoresFindsReplacesAndPrunes) {
  {
    profile::TuningDb db(path());  // creates the folder
    std::vector<profile::TuningRecord> records{record("aa", "halide", true, 5),
                                               record("aa", "dnnl", false, 0),
                                               record("bb", "halide", true, 7)};
    db.put(records);
  }
  profile::TuningDb db(path());  // reopened: the records persisted
  std::vector<profile::TuningRecord> aa = db.find("aa", profile::machine_fingerprint());
  ASSERT_EQ(aa.size(), 2u);
  EXPECT_EQ(aa[0].backend, "dnnl");
  EXPECT_FALSE(aa[0].ok);
  EXPECT_EQ(aa[0].reason, "crashed: SIGSEGV");
  EXPECT_EQ(aa[1].median_us, 5);
  EXPECT_GT(aa[1].timestamp, 0);
  EXPECT_TRUE(db.find("aa", "another machine").empty());

  // Same key: replaced, not duplicated.
  std::vector<profile::TuningRecord> again{record("aa", "halide", true, 4)};
  db.put(again);
  EXPECT_EQ(db.find("aa", profile::machine_fingerprint())[1].median_us, 4);
  profile::TuningDbStats s = db.stats();
  EXPECT_EQ(s.records, 3);
  EXPECT_EQ(s.ok, 2);
  EXPECT_EQ(s.kernels, 2);

  profile::TuningRecord old = record("cc", "halide", true, 1);
  old.version = "0.0.1";
  std::vector<profile::TuningRecord> olds{old};
  db.put(olds);
  EXPECT_EQ(db.prune({.other_versions = true}), 1);
  EXPECT_EQ(db.prune({.failed = true}), 1);
  EXPECT_EQ(db.stats().records, 2);
  EXPECT_EQ(profile::to_csv(db.all()[0]).substr(0, 3), "aa,");
  EXPECT_NE(profile::to_json_line(db.all()[0]).find("\"status\":\"ok\""), std::string::npos);
}

// A database written before rechecks (no recheck_us column) opens with its records, none
// rechecked, and stores rechecks from then on.
TEST_F(TuningDbTest, OlderDatabaseGainsTheRecheckColumn) {
  std::filesystem::create_directories(dir_ / "sub");
  sqlite3* old = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &old), SQLITE_OK);
  std::string insert = fmt::format(
      "CREATE TABLE records (kernel_hash TEXT NOT NULL, outputs TEXT NOT NULL, machine TEXT NOT "
      "NULL, backend TEXT NOT NULL, config TEXT NOT NULL, version TEXT NOT NULL, ok INTEGER NOT "
      "NULL, reason TEXT NOT NULL, median_us REAL NOT NULL, min_us REAL NOT NULL, max_us REAL "
      "NOT NULL, runs INTEGER NOT NULL, compile_s REAL NOT NULL, timestamp INTEGER NOT NULL, "
      "label TEXT NOT NULL, PRIMARY KEY (kernel_hash, outputs, machine, backend, config, "
      "version)); INSERT INTO records VALUES ('aa', 'f32[2]', '{}', 'halide', '', '{}', 1, '', "
      "5, 4, 6, 3, 0.1, 1, 'Add #0');",
      profile::machine_fingerprint(), profile::kOrchVersion);
  ASSERT_EQ(sqlite3_exec(old, insert.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(old);

  profile::TuningDb db(path());
  std::vector<profile::TuningRecord> aa = db.find("aa", profile::machine_fingerprint());
  ASSERT_EQ(aa.size(), 1u);
  EXPECT_EQ(aa[0].median_us, 5);
  EXPECT_EQ(aa[0].recheck_us, 0);
  aa[0].recheck_us = 7;
  db.put(aa);
  EXPECT_EQ(profile::TuningDb(path()).find("aa", profile::machine_fingerprint())[0].recheck_us, 7);
}

// A database that something else wrote may hold any integer in ok: stats count what find reads
// as ok (non-zero), so no sum overflows (the fuzzer's input held the most negative int64).
TEST_F(TuningDbTest, StatsCountAnyNonZeroOkAsOk) {
  {
    profile::TuningDb db(path());
    std::vector<profile::TuningRecord> records{record("aa", "halide", true, 5),
                                               record("bb", "halide", true, 6),
                                               record("cc", "halide", false, 0)};
    db.put(records);
  }
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path().c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw,
                         "UPDATE records SET ok = -9223372036854775808 WHERE kernel_hash = 'aa';"
                         "UPDATE records SET ok = 6 WHERE kernel_hash = 'bb';",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(raw);

  profile::TuningDb db(path());
  EXPECT_TRUE(db.find("aa", profile::machine_fingerprint())[0].ok);
  profile::TuningDbStats s = db.stats();
  EXPECT_EQ(s.records, 3);
  EXPECT_EQ(s.ok, 2);
  EXPECT_EQ(s.failed, 1);
}

// Search budgets add up per model and machine, persist, and are dropped when records are pruned
// (the budget assumed them).
TEST_F(TuningDbTest, SearchBudgetsAccumulateAndPruneDropsThem) {
  {
    profile::TuningDb db(path());
    EXPECT_EQ(db.lazy_seconds("model", "m1"), 0);
    db.add_lazy_seconds("model", "m1", 1.5);
    db.add_lazy_seconds("model", "m1", 2.25);
    db.add_lazy_seconds("model", "m2", 7);
  }
  profile::TuningDb db(path());
  EXPECT_DOUBLE_EQ(db.lazy_seconds("model", "m1"), 3.75);
  EXPECT_DOUBLE_EQ(db.lazy_seconds("model", "m2"), 7);
  EXPECT_EQ(db.lazy_seconds("other", "m1"), 0);
  EXPECT_EQ(db.prune({.failed = true}), 0);  // nothing removed: budgets kept
  EXPECT_DOUBLE_EQ(db.lazy_seconds("model", "m1"), 3.75);
  std::vector<profile::TuningRecord> failed{record("aa", "halide", false, 0)};
  db.put(failed);
  EXPECT_EQ(db.prune({.failed = true}), 1);
  EXPECT_EQ(db.lazy_seconds("model", "m1"), 0);
}

TEST_F(TuningDbTest, UnopenablePathNamesIt) {
  std::filesystem::create_directories(dir_);
  std::string blocker = (dir_ / "file").string();
  FILE* f = std::fopen(blocker.c_str(), "w");
  std::fclose(f);
  try {
    profile::TuningDb db(blocker + "/tuning.db");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(blocker), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace orch
