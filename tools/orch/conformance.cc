// `orch conformance DIR`: ONNX backend tests through import + the reference interpreter, and
// with --compiled also through the optimizer into a compiled module.
#include <fmt/format.h>

#include <chrono>
#include <map>

#include "commands.h"
#include "driver/conformance.h"
#include "ir/error.h"
#include "runtime/cuda_module.h"

namespace orch::tool {
namespace {

struct ConformanceArgs {
  std::string dir;
  std::string filter;
  std::string through;
  bool compiled = false;
  std::string target = "cpu";
  bool on_gpu = false;
  int jobs = 1;
  int timeout_s = 600;
  bool verbose = false;
};

struct OpTally {
  int passed = 0, failed = 0, skipped = 0;
};

void run_conformance_command(const ConformanceArgs& args) {
  driver::ConformanceOptions options;
  options.filter = args.filter;
  if (!args.through.empty()) {
    check(args.through == "fission" || args.through == "rewrite",
          "--through takes 'fission' or 'rewrite', got '{}'", args.through);
    options.through_fission = args.through == "fission";
    options.through_rewrite = args.through == "rewrite";
  }
  options.compiled = args.compiled;
  options.target = driver::parse_target(args.target);
  check(options.target == driver::Target::cpu || args.compiled, "--target applies to --compiled");
  options.on_gpu = args.on_gpu;
  if (args.on_gpu) {
    check(options.target == driver::Target::cuda, "--on-gpu applies to --target cuda");
    std::string why = runtime::cuda_unavailable();
    check(why.empty(), "--on-gpu: {}", why);
  }
  options.jobs = args.jobs;
  options.timeout_s = args.timeout_s;
  // Compiled tests take seconds each: show every one, numbered, with its time.
  bool progress = args.compiled || args.jobs > 1;
  size_t total = progress ? driver::conformance_tests(args.dir, args.filter).size() : 0;
  size_t done = 0;
  auto start = std::chrono::steady_clock::now();
  auto print_case = [&](const driver::CaseResult& r) {
    ++done;
    std::string prefix = progress ? fmt::format("[{}/{}] ", done, total) : "";
    std::string time = progress ? fmt::format(" ({:.1f} s)", r.seconds) : "";
    if (r.status == driver::CaseStatus::failed)
      fmt::print("{}FAIL {}{}: {}\n", prefix, r.name, time, r.reason);
    else if (r.status == driver::CaseStatus::skipped)
      fmt::print("{}SKIP {}{}: {}\n", prefix, r.name, time, r.reason);
    else if (args.verbose || progress)
      fmt::print("{}PASS {}{}\n", prefix, r.name, time);
    std::fflush(stdout);
  };
  auto results = driver::run_conformance(args.dir, options, print_case);

  std::map<std::string, OpTally> per_op;
  int passed = 0, failed = 0, skipped = 0;
  for (const auto& r : results) {
    int& total = r.status == driver::CaseStatus::passed   ? passed
                 : r.status == driver::CaseStatus::failed ? failed
                                                          : skipped;
    ++total;
    for (const std::string& op : r.ops) {
      OpTally& t = per_op[op];
      ++(r.status == driver::CaseStatus::passed   ? t.passed
         : r.status == driver::CaseStatus::failed ? t.failed
                                                  : t.skipped);
    }
  }
  fmt::print("\n{:<28} {:>7} {:>7} {:>8}\n", "op", "passed", "failed", "skipped");
  for (const auto& [op, t] : per_op)
    fmt::print("{:<28} {:>7} {:>7} {:>8}\n", op, t.passed, t.failed, t.skipped);
  if (progress)
    fmt::print("time: {:.0f} s wall\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  fmt::print("conformance: {} passed, {} failed, {} skipped\n", passed, failed, skipped);
  if (failed > 0) throw CLI::RuntimeError(1);
}

}  // namespace

void add_conformance_command(CLI::App& app) {
  auto args = std::make_shared<ConformanceArgs>();
  CLI::App* cmd = app.add_subcommand(
      "conformance",
      "Run every ONNX backend test folder under DIR (model.onnx + test_data_set_*) with the "
      "reference interpreter and compare with the shipped outputs (rtol 1e-3, atol 1e-7). Tests "
      "using unsupported ops or features are skipped with the reason. Exits non-zero on any "
      "failure; the last line is 'conformance: N passed, M failed, K skipped'");
  cmd->add_option("DIR", args->dir,
                  "Folder of test folders, e.g. "
                  "/usr/share/libonnx-testdata/data/node")
      ->required();
  cmd->add_option("--filter", args->filter, "Only tests whose folder name contains this text");
  cmd->add_option("--through", args->through,
                  "Run the graph after a pipeline stage instead of the operator graph: "
                  "'fission' (the primitive graph) or 'rewrite' (the primitive graph optimized)");
  cmd->add_flag("--compiled", args->compiled,
                "After the interpreter, also optimize each test's model into a compiled module "
                "(analytic costs: this checks code generation, not speed), check every kernel "
                "against the interpreter on the test's inputs, and compare the module's outputs "
                "with the test's; each test runs in its own process, and a failure names the "
                "stage (optimize, validate, load, run) or the compiled output that differs");
  cmd->add_option("--target", args->target,
                  "With --compiled: cpu (default), or cuda: each module compiled for the H200 "
                  "(analytic costs, as `orch optimize --target cuda --compile-only`) and its CUDA "
                  "code run on the host, checking the code generator without a GPU");
  cmd->add_flag("--on-gpu", args->on_gpu,
                "With --target cuda: run each module on this machine's GPU, kernel by kernel "
                "against the interpreter, instead of its code on the host");
  cmd->add_option("--jobs,-j", args->jobs, "Tests run at once, each in its own process")
      ->check(at_least(1));
  cmd->add_option("--timeout", args->timeout_s,
                  "Seconds a test may take when it runs in its own process (default 600)")
      ->check(above(0));
  cmd->add_flag("--verbose", args->verbose, "Also list passing tests");
  cmd->callback([args] { run_conformance_command(*args); });
}

}  // namespace orch::tool
