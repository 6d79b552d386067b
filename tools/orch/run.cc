// `orch run MODEL|MODULE_DIR`: runs a model with the reference interpreter, or a module compiled
// by `orch optimize`, and writes its outputs as .npy; `--repeat N` also times a module.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <memory>

#include "commands.h"
#include "driver/host_cuda_module.h"
#include "driver/model_io.h"
#include "frontend/tensor_proto.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/hash_util.h"
#include "ir/npy.h"
#include "kernel_profile.h"
#include "orch/module.h"
#include "runtime/cuda_module.h"

namespace orch::tool {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  bool random_inputs = false;
  uint64_t seed = 0;
  std::string out;
  int print_values = 0;
  int repeat = 0;
  int threads = 0;
  bool profile = false;
  int profile_top = 30;
  bool cuda_graph = false;
  bool on_host = false;
};

// What `orch run` runs: the interpreter on a model, or a compiled module.
struct Runner {
  std::vector<TensorSpec> inputs;
  std::vector<std::string> outputs;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> run;
  /// CUDA modules: prints the median device time of the kernels alone over `repeat` runs,
  /// launched one by one and as one CUDA graph.
  std::function<void(int repeat)> print_device_ms;
  /// Compiled modules: prints the per-kernel profile of `repeat` runs.
  std::function<void(const std::vector<Tensor>&, int repeat)> profile;
};

// "[0.1, 0.2, ...]": the first `limit` elements.
std::string preview(const Tensor& t, int limit) {
  std::string s = "[";
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), limit); ++i)
    s += fmt::format("{}{:.6g}", i ? ", " : "", t.get(i));
  return s + (t.numel() > limit ? ", ...]" : "]");
}

Tensor read_input_file(const std::string& path) {
  if (path.ends_with(".npy")) return read_npy_file(path);
  if (path.ends_with(".pb")) return frontend::read_tensor_pb_file(path);
  fail("input file '{}': expected a .npy or .pb (ONNX TensorProto) file", path);
}

// A file name for an output value: ONNX names may hold '/' and other characters.
std::string file_name_for(const std::string& value_name) {
  std::string s;
  for (char c : value_name)
    s += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return s + ".npy";
}

Runner model_runner(const RunArgs& args) {
  auto graph = std::make_shared<Graph>(driver::load_model(args.model, import_options(args.shapes)));
  Runner runner;
  for (ValueId v : graph->inputs())
    runner.inputs.push_back({graph->value(v).name, graph->value(v).type});
  for (ValueId v : graph->outputs()) runner.outputs.push_back(graph->value(v).name);
  runner.run = [graph](const std::vector<Tensor>& feed) { return interp::interpret(*graph, feed); };
  return runner;
}

// A CUDA module on this machine's GPU: each run copies the inputs in and the outputs back.
Runner cuda_module_runner(const RunArgs& args) {
  auto module = std::make_shared<runtime::CudaModule>(runtime::CudaModule::load(args.model));
  module->set_graph(args.cuda_graph);
  Runner runner{.inputs = module->inputs()};
  for (const TensorSpec& s : module->outputs()) runner.outputs.push_back(s.name);
  runner.run = [module](const std::vector<Tensor>& feed) { return module->run(feed); };
  runner.print_device_ms = [module](int repeat) {
    // Side by side, in one process: what the graph saves is the launches' overhead.
    if (module->has_host_kernels()) {
      fmt::print("gpu_ms: median={:.4f} (CUDA events; host kernels and their copies included)\n",
                 module->median_ms(repeat));
      fmt::print("gpu_graph_ms: none (a CUDA graph cannot hold the host kernels' copies)\n");
      return;
    }
    fmt::print("gpu_ms: median={:.4f} (kernels alone, CUDA events)\n", module->median_ms(repeat));
    fmt::print("gpu_graph_ms: median={:.4f} (the same launches as one CUDA graph)\n",
               module->median_ms(repeat, true));
  };
  int top = args.profile_top > 0 ? args.profile_top : std::numeric_limits<int>::max();
  runner.profile = [module, top](const std::vector<Tensor>& feed, int repeat) {
    module->run(feed);
    print_cuda_kernel_profile(*module, repeat, top);
  };
  return runner;
}

// A CUDA module's code run on this machine's CPU (driver::HostCudaModule), launch by launch and
// race-checked: its outputs where no GPU is, far slower than a GPU and not timed.
Runner host_cuda_module_runner(const RunArgs& args) {
  check(args.repeat == 0 && !args.cuda_graph,
        "--on-host runs a CUDA module's code on the CPU to check its outputs; --repeat and "
        "--cuda-graph time it on a GPU");
  auto module = std::make_shared<driver::HostCudaModule>(args.model);
  Runner runner{.inputs = module->inputs()};
  for (const TensorSpec& s : module->outputs()) runner.outputs.push_back(s.name);
  runner.run = [module](const std::vector<Tensor>& feed) { return module->run(feed); };
  return runner;
}

Runner module_runner(const RunArgs& args) {
  check(args.shapes.empty(), "--shape applies to models; a compiled module has fixed shapes");
  const bool cuda = runtime::is_cuda_module(args.model);
  check(!args.on_host || cuda, "--on-host applies to CUDA modules (orch optimize --target cuda)");
  if (args.on_host) return host_cuda_module_runner(args);
  if (cuda) {
    std::string missing = runtime::cuda_unavailable();
    check(missing.empty(),
          "{}: compiled for CUDA, but this machine cannot run it: {} (--on-host runs its code on "
          "the CPU)",
          args.model, missing);
    return cuda_module_runner(args);
  }
  check(!args.cuda_graph, "--cuda-graph applies to CUDA modules (orch optimize --target cuda)");
  auto module = std::make_shared<Module>(Module::load(args.model));
  if (args.threads > 0) module->set_threads(args.threads);
  auto context = std::make_shared<Context>(module->new_context());
  Runner runner{.inputs = module->inputs()};
  for (const TensorSpec& s : module->outputs()) runner.outputs.push_back(s.name);
  runner.run = [module, context](const std::vector<Tensor>& feed) {
    return module->run(*context, feed);
  };
  int top = args.profile_top > 0 ? args.profile_top : std::numeric_limits<int>::max();
  runner.profile = [module, context, top](const std::vector<Tensor>& feed, int repeat) {
    print_kernel_profile(*module, *context, feed, repeat, top);
  };
  return runner;
}

std::vector<Tensor> gather_inputs(const RunArgs& args, const std::vector<TensorSpec>& specs) {
  std::map<std::string, Tensor> given;
  for (const std::string& text : args.inputs) {
    size_t eq = text.find('=');
    check(eq != std::string::npos, "bad --input '{}': expected NAME=FILE", text);
    std::string name = text.substr(0, eq);
    check(std::any_of(specs.begin(), specs.end(),
                      [&](const TensorSpec& s) { return s.name == name; }),
          "--input names '{}', which is not an input of the model", name);
    check(!given.contains(name), "--input names '{}' twice", name);
    try {
      given[name] = read_input_file(text.substr(eq + 1));
    } catch (const Error& e) {
      fail("input '{}': {}", name, e.what());
    }
  }
  std::vector<Tensor> feed;
  for (size_t i = 0; i < specs.size(); ++i) {
    const std::string& name = specs[i].name;
    if (auto it = given.find(name); it != given.end())
      feed.push_back(it->second);
    else if (args.random_inputs)
      // The seeding of interp::random_inputs, so a model and its module get the same inputs.
      feed.push_back(interp::random_tensor(specs[i].type, hash_combine(args.seed, i)));
    else
      fail("missing input '{}': pass --input {}=FILE or --random-inputs", name, name);
  }
  return feed;
}

// Times `repeat` runs after three warm-up runs; prints the latency line last.
void time_runs(const Runner& runner, const std::vector<Tensor>& feed, int repeat) {
  for (int i = 0; i < 3; ++i) runner.run(feed);
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    runner.run(feed);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  const double median = driver::median_of(ms);
  if (runner.print_device_ms) runner.print_device_ms(repeat);
  fmt::print("latency_ms: median={:.4f} min={:.4f} max={:.4f}\n", median, ms.front(), ms.back());
}

void run_model(const RunArgs& args) {
  const bool module = std::filesystem::is_directory(args.model);
  check(args.repeat == 0 || module,
        "--repeat times a compiled module (orch optimize); '{}' is a model file", args.model);
  check(args.threads == 0 || module, "--threads applies to compiled modules");
  check(!args.cuda_graph || module, "--cuda-graph applies to CUDA modules");
  check(!args.on_host || module, "--on-host applies to CUDA modules");
  check(!args.profile || args.repeat > 0, "--profile needs --repeat N (the runs it times)");
  Runner runner = module ? module_runner(args) : model_runner(args);
  check(!args.profile || runner.profile, "--profile applies to compiled modules");
  std::vector<Tensor> feed = gather_inputs(args, runner.inputs);
  std::vector<Tensor> outputs = runner.run(feed);
  std::filesystem::create_directories(args.out);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = runner.outputs[i];
    std::string path = (std::filesystem::path(args.out) / file_name_for(name)).string();
    write_npy_file(outputs[i], path);
    fmt::print("{}: {} -> {}\n", name, format_type({outputs[i].dtype(), outputs[i].shape()}), path);
    if (args.print_values > 0) fmt::print("  {}\n", preview(outputs[i], args.print_values));
  }
  if (args.profile) runner.profile(feed, args.repeat);
  if (args.repeat > 0) time_runs(runner, feed, args.repeat);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Run a model with the reference interpreter, or a module compiled by `orch optimize`, and "
      "write each output as OUT/NAME.npy");
  cmd->add_option("MODEL", args->model,
                  "Model file (.onnx or .orch.txt) or compiled module directory")
      ->required();
  cmd->add_option(
      "--input", args->inputs,
      "An input value: NAME=FILE with a .npy or ONNX TensorProto .pb file (repeatable)");
  cmd->add_flag("--random-inputs", args->random_inputs,
                "Fill inputs not given with --input with random values (floats in [-1,1), "
                "integers in [0,10))");
  cmd->add_option("--seed", args->seed, "Seed for --random-inputs")->default_val(0);
  add_shape_option(*cmd, args->shapes);
  cmd->add_option("--out", args->out, "Folder for the output .npy files")->required();
  cmd->add_option("--print", args->print_values, "Also print the first N values of each output")
      ->check(at_least(0));
  cmd->add_option("--repeat", args->repeat,
                  "Module only: time N runs after 3 warm-up runs; the last line is "
                  "`latency_ms: median=X min=Y max=Z`")
      ->check(at_least(0));
  cmd->add_option("--threads", args->threads,
                  "Module only: worker threads of the kernels (default: one per core)")
      ->check(at_least(0));
  cmd->add_flag("--profile", args->profile,
                "Compiled module only, with --repeat: first time each kernel over N more runs "
                "and print the slowest against their times when tuned alone (a CUDA module: "
                "device time from CUDA events, against the analytic estimate), and totals per "
                "backend");
  cmd->add_flag("--cuda-graph", args->cuda_graph,
                "CUDA module only: run it as one CUDA graph, captured from its launches at the "
                "first run (with --repeat, both ways are timed either way: gpu_ms and "
                "gpu_graph_ms)");
  cmd->add_flag("--on-host", args->on_host,
                "CUDA module only: run its code on this machine's CPU, launch by launch and "
                "race-checked (as orch optimize --compile-only validates it), to see its outputs "
                "where no GPU is; slow, and not timed");
  cmd->add_option("--profile-top", args->profile_top,
                  "With --profile: how many of the slowest kernels to list (default 30; 0: all)")
      ->check(at_least(0));
  cmd->callback([args] { run_model(*args); });
}

}  // namespace orch::tool
