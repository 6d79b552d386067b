// Tuning a model: the plan is valid, a second tune measures nothing, the BLP's costs carry the
// write cost, oneDNN's epilogue kernels and convolution chains are measured before the lazy rounds
// (narrow convolutions with Halide too), `kill -9` during `orch tune` loses nothing stored (a
// rerun measures only what is missing, as it does choices the database lacks), a spent search
// budget is not spent again, and the plan's kernels are rechecked once, a kernel chosen for a
// lucky first time included; a primitive no backend computes is named at once, and one only
// the fallback measured is measured again.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../common/orch_cli.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "ir/error.h"
#include "profile/tuning_db.h"
#include "schedule/machine.h"

namespace orch {
namespace {

const std::string kTinyMlp = std::string(ORCH_SOURCE_DIR) + "/examples/tiny_mlp.orch.txt";

// A chain of four elementwise operators: seven kernels of at most two primitives.
constexpr const char* kChain = R"(graph chain(%x: f32[8,16]) {
  %a: f32[8,16] = Relu(%x)
  %b: f32[8,16] = Exp(%a)
  %c: f32[8,16] = Neg(%b)
  %d: f32[8,16] = Sigmoid(%c)
  return %d
}
)";

// Two 3x3 convolutions, each with its ReLU.
constexpr const char* kConvs =
    R"(graph convs(%x: f32[1,16,12,12], %v: f32[16,16,3,3], %w: f32[16,16,3,3]) {
  %a: f32[1,16,12,12] = Conv(%x, %v) {pads = [1, 1, 1, 1]}
  %b: f32[1,16,12,12] = Relu(%a)
  %c: f32[1,16,12,12] = Conv(%b, %w) {pads = [1, 1, 1, 1]}
  %d: f32[1,16,12,12] = Relu(%c)
  return %d
}
)";

constexpr double kMemoryGbs = 20;
constexpr double kUsPerByte = 1 / (kMemoryGbs * 1e3);

class TuneTest : public cli_test::CliTest {
 protected:
  Graph model(const char* name, const char* text) const {
    std::string file = path(name);
    {
      std::ofstream out(file);
      out << text;
    }
    return driver::primitive_graph(file, {});
  }
  Graph chain() const { return model("chain.orch.txt", kChain); }

  // This machine with main memory at kMemoryGbs, so that the write costs are known exactly.
  driver::TuneOptions options() const {
    driver::TuneOptions o;
    o.db_path = path("tuning.db");
    o.machine_path = path("machine.json");
    if (!std::filesystem::exists(o.machine_path)) {
      schedule::Machine machine = schedule::host_machine();
      machine.levels.back().bandwidth_gbs = kMemoryGbs;
      schedule::save_machine(machine, o.machine_path);
    }
    o.budget_ms = 2;
    o.max_primitives = 2;
    o.halide_configs = 0;  // the default schedule only: keeps the test short
    return o;
  }
};

TEST_F(TuneTest, PlanIsValidAndSecondTuneMeasuresNothing) {
  Graph graph = driver::primitive_graph(kTinyMlp, {});
  driver::TunedModel first = driver::tune_model(graph, options());
  EXPECT_EQ(check_plan(first.problem, first.plan), "");
  EXPECT_GT(first.stats.measured, 0);
  EXPECT_EQ(first.stats.from_db, 0);
  EXPECT_GT(first.stats.unique, 0);
  EXPECT_LE(first.stats.unique, first.stats.candidates);
  ASSERT_EQ(first.choices.size(), first.problem.candidates.size());
  for (const PlanKernel& k : first.plan.kernels) {
    const codegen::KernelChoice& c = first.choices[static_cast<size_t>(k.candidate)];
    EXPECT_FALSE(c.backend.empty());
    double written = 0;  // the bytes of the values the candidate writes
    for (int p : first.problem.candidates[static_cast<size_t>(k.candidate)].outputs)
      for (ValueId v : first.graph.node(p).outputs) {
        const TensorType& t = first.graph.value(v).type;
        written +=
            static_cast<double>(num_elements(t.shape)) * static_cast<double>(dtype_size(t.dtype));
      }
    EXPECT_NEAR(k.cost_us, c.cost_us + written * kUsPerByte, 1e-9);
  }

  driver::TunedModel second = driver::tune_model(graph, options());
  EXPECT_EQ(second.stats.measured, 0);
  EXPECT_EQ(second.stats.measurements, 0);
  EXPECT_EQ(second.plan.objective_us, first.plan.objective_us);
}

TEST_F(TuneTest, KillNineLosesNothingStored) {
  std::string db_path = path("tuning.db");
  std::string model = path("chain.orch.txt");
  {
    std::ofstream out(model);
    out << kChain;
  }
  std::string args = fmt::format(
      "tune {} --db {} --exhaustive --max-primitives 2 --budget-ms 2 --halide-configs 0 --quiet",
      model, db_path);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so the kill reaches the workers too
    ::execl(ORCH_BINARY, ORCH_BINARY, "tune", model.c_str(), "--db", db_path.c_str(),
            "--exhaustive", "--max-primitives", "2", "--budget-ms", "2", "--halide-configs", "0",
            "--quiet", nullptr);
    ::_exit(127);
  }
  // Kill it once the first records are stored.
  auto start = std::chrono::steady_clock::now();
  int64_t stored = 0;
  while (stored == 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::filesystem::exists(db_path)) stored = profile::TuningDb(db_path).stats().records;
  }
  ::kill(-pid, SIGKILL);
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_GT(stored, 0);

  std::map<std::string, double> before;
  std::set<std::string> kernels_before;
  for (const profile::TuningRecord& r : profile::TuningDb(db_path).all()) {
    before[r.kernel_hash + r.backend] = r.median_us;
    kernels_before.insert(r.kernel_hash);
  }

  cli_test::Outcome rerun = cli_test::orch_cli(args);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.output;
  EXPECT_NE(rerun.output.find(fmt::format("kernels: {} from the database", kernels_before.size())),
            std::string::npos)
      << rerun.output;
  // Nothing stored before the kill was measured again.
  std::map<std::string, double> after;
  for (const profile::TuningRecord& r : profile::TuningDb(db_path).all())
    after[r.kernel_hash + r.backend] = r.median_us;
  for (const auto& [key, us] : before) EXPECT_EQ(after.at(key), us) << key;
  EXPECT_GE(after.size(), before.size());

  cli_test::Outcome third = cli_test::orch_cli(args);
  ASSERT_EQ(third.exit_code, 0) << third.output;
  EXPECT_NE(third.output.find(" 0 measured (0 measurements)"), std::string::npos) << third.output;

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "ok");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

// Every candidate of the chain writes f32[8,16] buffers: on two kernel threads its BLP cost is
// its measured latency plus those bytes at the machine's main-memory bandwidth, its latency
// alone without.
TEST_F(TuneTest, WriteCostIsOutputBytesAtMemoryBandwidth) {
  Graph graph = chain();
  driver::TuneOptions o = options();
  o.exhaustive = true;
  o.threads = 2;
  o.write_cost = false;
  driver::TunedModel alone = driver::tune_model(graph, o);
  o.write_cost = true;
  driver::TunedModel written = driver::tune_model(graph, o);
  EXPECT_EQ(written.stats.measurements, 0);  // the same measurements, another objective
  ASSERT_EQ(alone.problem.candidates.size(), written.problem.candidates.size());
  constexpr double kBufferBytes = 8 * 16 * sizeof(float);  // kChain's f32[8,16]
  int checked = 0;
  for (size_t i = 0; i < alone.problem.candidates.size(); ++i) {
    const Candidate& a = alone.problem.candidates[i];
    const Candidate& w = written.problem.candidates[i];
    if (!std::isfinite(a.cost_us)) continue;
    ASSERT_EQ(a.outputs, w.outputs);
    EXPECT_NEAR(w.cost_us - a.cost_us,
                static_cast<double>(a.outputs.size()) * kBufferBytes * kUsPerByte, 1e-9)
        << a.label;
    ++checked;
  }
  EXPECT_GE(checked, 4);  // at least the single primitives
  EXPECT_EQ(check_plan(written.problem, written.plan), "");
}

// On one kernel thread a module pays no write cost (TuneOptions::write_cost): the BLP's costs are
// the measured latencies whether the option is on or off.
TEST_F(TuneTest, NoWriteCostOnOneThread) {
  Graph graph = chain();
  driver::TuneOptions o = options();
  o.exhaustive = true;
  o.threads = 1;
  o.write_cost = true;
  driver::TunedModel on = driver::tune_model(graph, o);
  o.write_cost = false;
  driver::TunedModel off = driver::tune_model(graph, o);
  EXPECT_EQ(off.stats.measurements, 0);
  ASSERT_EQ(on.problem.candidates.size(), off.problem.candidates.size());
  int finite = 0;
  for (size_t i = 0; i < on.problem.candidates.size(); ++i) {
    EXPECT_EQ(on.problem.candidates[i].cost_us, off.problem.candidates[i].cost_us)
        << on.problem.candidates[i].label;
    finite += std::isfinite(on.problem.candidates[i].cost_us);
  }
  EXPECT_GE(finite, 4);
}

// Before any lazy round, the kernels of a MatMul with its bias (and activation) are measured with
// oneDNN, which takes them as post-ops, and so are those epilogues without the MatMul (the other
// way to run them): with no round at all, the plan can use either.
TEST_F(TuneTest, LibraryEpiloguesAreMeasuredUpFront) {
  Graph graph = driver::primitive_graph(kTinyMlp, {});
  driver::TuneOptions o = options();
  o.max_primitives = 8;
  o.max_rounds = 0;
  driver::TunedModel t = driver::tune_model(graph, o);
  EXPECT_EQ(t.stats.rounds, 0);
  int epilogues = 0, tails = 0;
  for (size_t i = 0; i < t.problem.candidates.size(); ++i) {
    const Candidate& c = t.problem.candidates[i];
    if (c.primitives.size() < 2 || !std::isfinite(c.cost_us)) continue;
    bool linear = false;
    for (int p : c.primitives) linear |= t.graph.node(p).op == "prim.MatMul";
    if (linear) {
      EXPECT_EQ(t.choices[i].backend, "dnnl") << c.label;
      ++epilogues;
      continue;
    }
    // A tail is some measured MatMul kernel's primitives less the MatMul.
    bool tail = false;
    for (size_t j = 0; j < t.problem.candidates.size(); ++j) {
      std::vector<int> rest = t.problem.candidates[j].primitives;
      size_t before = rest.size();
      std::erase_if(rest, [&](int p) { return t.graph.node(p).op == "prim.MatMul"; });
      tail |= rest.size() < before && rest == c.primitives &&
              std::isfinite(t.problem.candidates[j].cost_us);
    }
    EXPECT_TRUE(tail) << c.label;
    ++tails;
  }
  EXPECT_GE(epilogues, 2);  // each MatMul with its bias at least
  EXPECT_GE(tails, 1);
  EXPECT_EQ(check_plan(t.problem, t.plan), "");
}

// Both convolutions with their ReLUs are one candidate, a oneDNN chain measured before the lazy
// rounds (Halide is never asked); with max_chain 1 no candidate holds both.
TEST_F(TuneTest, ConvolutionChainsAreMeasuredWithOneDnn) {
  Graph graph = model("convs.orch.txt", kConvs);
  driver::TuneOptions o = options();
  o.max_primitives = 4;
  o.max_rounds = 0;
  auto chains = [](const driver::TunedModel& t) {
    int count = 0;
    for (size_t i = 0; i < t.problem.candidates.size(); ++i) {
      const Candidate& c = t.problem.candidates[i];
      int convs = 0;
      for (int p : c.primitives) convs += t.graph.node(p).op == "prim.Conv";
      if (convs < 2) continue;
      EXPECT_TRUE(std::isfinite(c.cost_us)) << c.label;
      EXPECT_EQ(t.choices[i].backend, "dnnl") << c.label;
      ++count;
    }
    return count;
  };
  driver::TunedModel t = driver::tune_model(graph, o);
  EXPECT_EQ(chains(t), 2);  // with and without the last ReLU
  EXPECT_EQ(check_plan(t.problem, t.plan), "");
  o.max_chain = 1;
  EXPECT_EQ(chains(driver::tune_model(graph, o)), 0);
}

// Deletes the database's records of oneDNN configurations other than the default; with
// `time_out_default`, the default's records become timeouts, as when the old profiler's child
// was killed in the default configuration and the rest went unmeasured. Returns how many
// records it deleted.
int forget_dnnl_configs(const std::string& path, bool time_out_default) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "DELETE FROM records WHERE backend = 'dnnl' AND config != ''", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  int deleted = sqlite3_changes(db);
  if (time_out_default) {
    EXPECT_EQ(sqlite3_exec(db,
                           "UPDATE records SET ok = 0, reason = 'timeout after 30 s of CPU time' "
                           "WHERE backend = 'dnnl'",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
  }
  sqlite3_close(db);
  return deleted;
}

// A database filled by an orch that offered fewer oneDNN configurations, or by one whose
// profiler lost a kernel's configurations to a timeout in another: a rerun measures the missing
// configurations of the kernels it knows, and nothing else.
class MissingConfigs : public TuneTest, public testing::WithParamInterface<bool> {};

TEST_P(MissingConfigs, AreMeasuredAlone) {
  Graph graph = model("convs.orch.txt", kConvs);
  driver::TuneOptions o = options();
  o.max_primitives = 4;
  o.max_rounds = 0;
  driver::tune_model(graph, o);
  auto dnnl_records = [&](bool configured_only) {
    int n = 0;
    for (const profile::TuningRecord& r : profile::TuningDb(o.db_path).all())
      n += r.backend == "dnnl" && (!configured_only || !r.config.empty());
    return n;
  };
  int stored = dnnl_records(false);
  int deleted = forget_dnnl_configs(o.db_path, GetParam());
  ASSERT_GT(deleted, 0) << "a single convolution offers at least the plain layout";
  ASSERT_EQ(dnnl_records(true), 0);

  driver::TunedModel second = driver::tune_model(graph, o);
  EXPECT_EQ(second.stats.measured, 0);
  EXPECT_EQ(second.stats.measurements, deleted);
  EXPECT_EQ(dnnl_records(false), stored);
  EXPECT_EQ(check_plan(second.problem, second.plan), "");
}

INSTANTIATE_TEST_SUITE_P(TuneTest, MissingConfigs, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "AfterATimeout" : "FromAnOlderOrch";
                         });

// A narrow convolution (3 output channels) is measured with Halide besides oneDNN, and a
// database holding only its oneDNN records gets Halide's default schedule measured, alone.
TEST_F(TuneTest, NarrowConvolutionsAreMeasuredWithHalideToo) {
  std::string weights;
  for (int i = 0; i < 3 * 8 * 3 * 3; ++i) weights += fmt::format("{}{}", i ? ", " : "", i % 7 - 3);
  std::string text = "graph narrow(%x: f32[1,8,20,40]) {\n  const %w = f32[3,8,3,3]{" + weights +
                     "}\n  %y: f32[1,3,18,38] = Conv(%x, %w) {pads = [0, 0, 0, 0]}\n"
                     "  return %y\n}\n";
  Graph graph = model("narrow.orch.txt", text.c_str());
  driver::TuneOptions o = options();
  auto halide_defaults = [&] {
    int n = 0;
    for (const profile::TuningRecord& r : profile::TuningDb(o.db_path).all())
      n += r.backend == "halide" && r.config.empty() && r.ok;
    return n;
  };
  driver::TunedModel first = driver::tune_model(graph, o);
  ASSERT_EQ(first.stats.unique, 1);
  EXPECT_EQ(halide_defaults(), 1) << "the lone convolution is not left to oneDNN";

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(o.db_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "DELETE FROM records WHERE backend = 'halide'", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  driver::TunedModel second = driver::tune_model(graph, o);
  EXPECT_EQ(second.stats.measured, 0);
  EXPECT_EQ(second.stats.measurements, 1);
  EXPECT_EQ(halide_defaults(), 1);
  EXPECT_EQ(check_plan(second.problem, second.plan), "");
}

// The lazy search's time is kept per model in the database: a rerun whose --max-lazy-s earlier
// runs already spent settles without a single round (a warm `orch tune` of a model whose search
// hit its cap measures nothing), and a larger budget continues the search.
TEST_F(TuneTest, SpentSearchBudgetCarriesOverToReruns) {
  Graph graph = chain();
  driver::TuneOptions o = options();
  o.exact_s = 0;
  o.max_rounds = 1;
  driver::TunedModel first = driver::tune_model(graph, o);
  EXPECT_EQ(first.stats.earlier_lazy_s, 0);
  EXPECT_EQ(first.stats.rounds, 1);

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(o.db_path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*), SUM(lazy_seconds) FROM searches", -1, &stmt,
                               nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 1);
  double spent = sqlite3_column_double(stmt, 1);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  ASSERT_GT(spent, 0);

  o.max_rounds = 30;
  o.max_lazy_s = spent;
  driver::TunedModel second = driver::tune_model(graph, o);
  EXPECT_DOUBLE_EQ(second.stats.earlier_lazy_s, spent);
  EXPECT_EQ(second.stats.rounds, 0);
  EXPECT_EQ(second.stats.measurements, 0);
  EXPECT_EQ(check_plan(second.problem, second.plan), "");

  o.max_lazy_s = spent + 600;
  driver::TunedModel third = driver::tune_model(graph, o);
  EXPECT_GE(third.stats.earlier_lazy_s, spent);
  EXPECT_GE(third.stats.rounds, 1);
}

// A fixed policy's kernels are each the only one for their primitives: all are measured, even
// when earlier runs spent the lazy search's budget (which once left Segformer-B0's operator
// policy at batch 16 "infeasible").
TEST_F(TuneTest, AFixedPolicyMeasuresEveryKernelWhateverTheLazyBudget) {
  Graph graph = chain();
  driver::TuneOptions o = options();
  o.max_lazy_s = 0;
  o.fixed_kernels = {{.begin = 0, .end = 2}, {.begin = 2, .end = 4}};
  driver::TunedModel tuned = driver::tune_model(graph, o);
  EXPECT_EQ(check_plan(tuned.problem, tuned.plan), "");
  ASSERT_EQ(tuned.plan.kernels.size(), 2u);
  for (const PlanKernel& k : tuned.plan.kernels)
    EXPECT_EQ(tuned.problem.candidates[static_cast<size_t>(k.candidate)].primitives.size(), 2u);
}

// Every kernel of the final plan is timed by its recheck, stored: a rerun rechecks nothing. Then
// every first time not rechecked is made lucky (1 ns in the database): the plan takes those
// kernels, rechecks them, and ends with rechecked times only again.
TEST_F(TuneTest, PlanKernelsAreRecheckedOnceAndLuckyTimesDoNotStay) {
  Graph graph = chain();
  driver::TuneOptions o = options();
  o.recheck_rounds = 20;
  auto rechecked_times = [&](const driver::TunedModel& t) {
    std::multiset<double> rechecks;
    for (const profile::TuningRecord& r : profile::TuningDb(o.db_path).all())
      if (r.recheck_us > 0) rechecks.insert(r.recheck_us);
    for (const PlanKernel& k : t.plan.kernels) {
      double us = t.choices[static_cast<size_t>(k.candidate)].cost_us;
      EXPECT_TRUE(rechecks.contains(us)) << us << " us is no recheck";
    }
  };
  driver::TunedModel first = driver::tune_model(graph, o);
  EXPECT_GE(first.stats.rechecked, 1);
  EXPECT_GE(first.stats.recheck_rounds, 1);
  rechecked_times(first);

  driver::TunedModel second = driver::tune_model(graph, o);
  EXPECT_EQ(second.stats.rechecked, 0);
  EXPECT_EQ(second.stats.recheck_rounds, 0);
  EXPECT_EQ(second.plan.objective_us, first.plan.objective_us);

  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(o.db_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE records SET median_us = 0.001 WHERE ok = 1 AND recheck_us = 0",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  int lucky = sqlite3_changes(db);
  sqlite3_close(db);
  ASSERT_GT(lucky, 0);
  driver::TunedModel third = driver::tune_model(graph, o);
  EXPECT_GE(third.stats.rechecked, 1);
  EXPECT_EQ(third.stats.measurements, 0);
  rechecked_times(third);
  EXPECT_EQ(check_plan(third.problem, third.plan), "");
}

// A primitive no backend computes, the fallback included, is named as soon as it is known: the
// full search still plans it inside a fused kernel, and a fixed policy (one kernel per primitive
// here), which has no other kernel for it, stops there.
TEST_F(TuneTest, APrimitiveNoBackendComputesIsNamedAtOnce) {
  Graph graph = chain();
  driver::TuneOptions o = options();
  driver::tune_model(graph, o);
  const std::string exp = "prim.Elementwise #1";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(o.db_path.c_str(), &db), SQLITE_OK);
  std::string broken = fmt::format(
      "UPDATE records SET ok = 0, reason = 'broken by the test' WHERE label = '{0}';"
      "INSERT INTO records SELECT kernel_hash, outputs, machine, 'reference', '', version, 0, "
      "'broken by the test', 0, 0, 0, 0, 0, timestamp, label, 0 FROM records "
      "WHERE label = '{0}' LIMIT 1",
      exp);
  ASSERT_EQ(sqlite3_exec(db, broken.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);

  std::vector<std::string> warnings;
  o.warning = [&](std::string_view w) { warnings.emplace_back(w); };
  driver::TunedModel full = driver::tune_model(graph, o);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(exp + " failed on every backend"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("broken by the test"), std::string::npos) << warnings[0];
  EXPECT_EQ(check_plan(full.problem, full.plan), "");
  for (const PlanKernel& k : full.plan.kernels) {
    const Candidate& c = full.problem.candidates[static_cast<size_t>(k.candidate)];
    EXPECT_FALSE(c.primitives.size() == 1 && c.primitives[0] == 1)
        << "the broken kernel is planned";
  }

  for (int p = 0; p < 4; ++p) o.fixed_kernels.push_back({.begin = p, .end = p + 1});
  try {
    driver::tune_model(graph, o);
    FAIL() << "a fixed policy planned a kernel no backend computes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(exp + " failed on every backend"), std::string::npos)
        << e.what();
  }
}

// The state `orch db prune --failed` leaves when every backend but the fallback timed out on a
// kernel: the fallback's record alone. The kernel is measured again, not planned at that time.
TEST_F(TuneTest, AKernelOnlyTheFallbackMeasuredIsMeasuredAgain) {
  Graph graph = chain();
  driver::TuneOptions o = options();
  driver::tune_model(graph, o);
  const std::string exp = "prim.Elementwise #1";
  auto records_of = [&](const std::string& backend) {
    int n = 0;
    for (const profile::TuningRecord& r : profile::TuningDb(o.db_path).all())
      n += r.label == exp && r.backend == backend;
    return n;
  };
  ASSERT_EQ(records_of("reference"), 0);
  ASSERT_GT(records_of("halide"), 0);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(o.db_path.c_str(), &db), SQLITE_OK);
  std::string pruned = fmt::format(
      "INSERT INTO records SELECT kernel_hash, outputs, machine, 'reference', '', version, 1, '', "
      "1e6, 1e6, 1e6, 1, 0, timestamp, label, 0 FROM records WHERE label = '{0}' LIMIT 1;"
      "DELETE FROM records WHERE label = '{0}' AND backend != 'reference'",
      exp);
  ASSERT_EQ(sqlite3_exec(db, pruned.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  ASSERT_EQ(records_of("halide"), 0);

  driver::TunedModel second = driver::tune_model(graph, o);
  EXPECT_GE(second.stats.measured, 1);
  EXPECT_GT(records_of("halide"), 0);
  EXPECT_LT(second.plan.objective_us, 1e6) << "planned at the fallback's time";
  EXPECT_EQ(check_plan(second.problem, second.plan), "");
}

}  // namespace
}  // namespace orch
