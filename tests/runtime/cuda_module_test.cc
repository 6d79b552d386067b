// runtime::CudaModule without a GPU: a stand-in CudaDriver over host memory, whose launches run
// the module's kernels.cu compiled for the host (codegen::HostKernels), checks the runtime's own
// logic (device buffers, each launch's arguments, host kernels between copies, the CUDA graph it
// captures and replays) against the interpreter. What only a GPU shows (timing, the cubin,
// cuBLAS and cuDNN) is not checked here: the modules call no library.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "codegen/cuda/cuda_emulate.h"
#include "codegen/cuda/cuda_nvrtc.h"
#include "codegen/cuda/cuda_source.h"
#include "driver/optimize.h"
#include "driver/pipeline.h"
#include "driver/tune.h"
#include "fission/fission.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/close.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "runtime/cuda_driver.h"
#include "runtime/cuda_module.h"
#include "runtime/module_format.h"
#include "runtime/module_manifest.h"

namespace orch::runtime {
namespace {

namespace fs = std::filesystem;

// CUDA_ERROR_NOT_FOUND, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the stand-in's launch failure.
constexpr int kNotFound = 500;
constexpr int kCaptureUnsupported = 900;
constexpr int kLaunchFailed = 719;

struct RecordedLaunch {
  const codegen::HostFunction* function = nullptr;
  codegen::CudaLaunch launch;
  std::vector<void*> args;
};

// The stand-in's state: one module at a time, as its entry points are plain functions.
struct Stand {
  fs::path dir;  // the module whose kernels.cu module_load_data compiles
  std::vector<codegen::HostFunction> functions;
  std::unique_ptr<codegen::HostKernels> kernels;
  bool capturing = false;
  std::vector<RecordedLaunch> recorded;
  int graph_launches = 0;
  int copies_in_capture = 0;
};

Stand& stand() {
  static Stand s;
  return s;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int load_module(void** module, const void*) {
  Stand& s = stand();
  ModuleLayout layout = parse_manifest(read_file(s.dir / kManifestFile), "manifest.json");
  s.functions.clear();
  for (size_t k = 0; k < layout.kernels.size(); ++k)
    for (const LaunchSpec& l : layout.launches[k])
      s.functions.push_back({l.function, static_cast<int>(layout.kernel_inputs[k].size() +
                                                          layout.kernel_outputs[k].size() + 1)});
  std::string source = read_file(s.dir / kCudaSourceFile);
  s.kernels = std::make_unique<codegen::HostKernels>(source.substr(codegen::cuda_prelude().size()),
                                                     s.functions);
  *module = &s;
  return 0;
}

int get_function(void** function, void*, const char* name) {
  for (const codegen::HostFunction& f : stand().functions)
    if (f.name == name) {
      *function = const_cast<codegen::HostFunction*>(&f);
      return 0;
    }
  return kNotFound;
}

int run_launch(const RecordedLaunch& r) {
  try {
    stand().kernels->launch(r.launch, r.args);
    return 0;
  } catch (const Error& e) {
    ADD_FAILURE() << r.launch.function << ": " << e.what();
    return kLaunchFailed;
  }
}

int launch_kernel(void* function, unsigned grid, unsigned, unsigned, unsigned block, unsigned,
                  unsigned, unsigned shared, void*, void** params, void**) {
  auto* f = static_cast<const codegen::HostFunction*>(function);
  RecordedLaunch r{f, {f->name, grid, static_cast<int>(block), shared, {}, {}}, {}};
  // A launch takes its arguments' values when it is made, captured or not.
  for (int i = 0; i < f->parameters; ++i)
    r.args.push_back(reinterpret_cast<void*>(*static_cast<CuDevicePtr*>(params[i])));
  if (!stand().capturing) return run_launch(r);
  stand().recorded.push_back(std::move(r));
  return 0;
}

int mem_alloc(CuDevicePtr* pointer, size_t bytes) {
  void* p = std::malloc(bytes);
  codegen::poison({static_cast<std::byte*>(p), bytes});  // device memory holds garbage
  *pointer = reinterpret_cast<CuDevicePtr>(p);
  return 0;
}

// A synchronous copy cannot be captured, as on a GPU.
int copy_to(CuDevicePtr to, const void* from, size_t bytes) {
  if (stand().capturing) return ++stand().copies_in_capture, kCaptureUnsupported;
  std::memcpy(reinterpret_cast<void*>(to), from, bytes);
  return 0;
}

int copy_from(void* to, CuDevicePtr from, size_t bytes) {
  if (stand().capturing) return ++stand().copies_in_capture, kCaptureUnsupported;
  std::memcpy(to, reinterpret_cast<const void*>(from), bytes);
  return 0;
}

using Clock = std::chrono::steady_clock;

const CudaDriver& stand_in() {
  static const CudaDriver d = [] {
    CudaDriver d;
    d.init = [](unsigned) { return 0; };
    d.device_count = [](int* n) { return *n = 1, 0; };
    d.device_get = [](int* device, int ordinal) { return *device = ordinal, 0; };
    // Compute capability 9.0 (attributes 75 and 76), as the modules are compiled for.
    d.device_attribute = [](int* v, int attribute, int) { return *v = attribute == 75 ? 9 : 0, 0; };
    d.primary_ctx_retain = [](void** c, int) { return *c = &stand(), 0; };
    d.primary_ctx_release = [](int) { return 0; };
    d.ctx_set_current = [](void*) { return 0; };
    d.ctx_synchronize = [] { return 0; };
    d.module_load_data = load_module;
    d.module_unload = [](void*) { return stand().kernels.reset(), 0; };
    d.module_get_function = get_function;
    d.func_set_attribute = [](void*, int, int) { return 0; };
    d.mem_alloc = mem_alloc;
    d.mem_free = [](CuDevicePtr p) { return std::free(reinterpret_cast<void*>(p)), 0; };
    d.memcpy_htod = copy_to;
    d.memcpy_dtoh = copy_from;
    d.launch_kernel = launch_kernel;
    d.event_create = [](void** e, unsigned) { return *e = new Clock::time_point(), 0; };
    d.event_record = [](void* e, void*) {
      return *static_cast<Clock::time_point*>(e) = Clock::now(), 0;
    };
    d.event_synchronize = [](void*) { return 0; };
    d.event_elapsed_ms = [](float* ms, void* a, void* b) {
      *ms = std::chrono::duration<float, std::milli>(*static_cast<Clock::time_point*>(b) -
                                                     *static_cast<Clock::time_point*>(a))
                .count();
      return 0;
    };
    d.event_destroy = [](void* e) { return delete static_cast<Clock::time_point*>(e), 0; };
    d.error_string = [](int, const char** text) { return *text = "stand-in CUDA error", 0; };
    d.stream_create = [](void** s, unsigned) { return *s = &stand(), 0; };
    d.stream_destroy = [](void*) { return 0; };
    d.stream_begin_capture = [](void*, int) {
      stand().recorded.clear();
      return stand().capturing = true, 0;
    };
    d.stream_end_capture = [](void*, void** graph) {
      stand().capturing = false;
      *graph = new std::vector<RecordedLaunch>(std::move(stand().recorded));
      return 0;
    };
    d.graph_instantiate = [](void** exec, void* graph, unsigned long long) {
      return *exec = graph, 0;
    };
    d.graph_launch = [](void* exec, void*) {
      ++stand().graph_launches;
      for (const RecordedLaunch& r : *static_cast<std::vector<RecordedLaunch>*>(exec))
        if (int result = run_launch(r); result != 0) return result;
      return 0;
    };
    d.graph_exec_destroy = [](void*) { return 0; };
    d.graph_destroy = [](void* g) {
      return delete static_cast<std::vector<RecordedLaunch>*>(g), 0;
    };
    return d;
  }();
  return d;
}

// `model` (operators) compiled for CUDA with generated code only, validated on the host; the
// primitive graph it was compiled from.
Graph compile(const Graph& model, const fs::path& dir) {
  driver::TuneOptions tune;
  tune.analytic = true;
  tune.target = driver::Target::cuda;
  tune.cuda_libraries = {.cublas = false, .cudnn = false};
  driver::TunedModel tuned = driver::tune_model(fission::fission(model), tune);
  driver::OptimizeOptions build;
  build.tune = tune;
  driver::build_module(tuned.graph, tuned.problem, tuned.plan, tuned.choices, dir.string(), build);
  return tuned.graph;
}

void expect_close(const std::vector<Tensor>& want, const std::vector<Tensor>& got) {
  ASSERT_EQ(want.size(), got.size());
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(want[o].shape(), got[o].shape()) << o;
    for (int64_t i = 0; i < want[o].numel(); ++i)
      EXPECT_TRUE(close_enough(got[o].get(i), want[o].get(i), 1e-4, 1e-5))
          << "output " << o << " element " << i << ": " << got[o].get(i) << " vs "
          << want[o].get(i);
  }
}

class CudaModuleStandIn : public testing::Test {
 protected:
  void SetUp() override {
    std::string unavailable = codegen::nvrtc_unavailable();
    if (!unavailable.empty()) GTEST_SKIP() << unavailable;
    dir_ = fs::temp_directory_path() / fmt::format("orch_cuda_stand_in_{}", ::getpid());
    fs::remove_all(dir_);
    stand().graph_launches = stand().copies_in_capture = 0;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Compiles `text`, loads the module through the stand-in, and checks a plain run, a run kernel
  // by kernel against the interpreter, and a run of its CUDA graph.
  void check_module(std::string_view text) {
    Graph primitives = compile(parse_graph(text), dir_);
    stand().dir = dir_;
    CudaModule module = CudaModule::load(dir_.string(), stand_in());
    std::vector<Tensor> inputs = interp::random_inputs(primitives, 3);
    std::vector<Tensor> want = interp::interpret(primitives, inputs);
    expect_close(want, module.run(inputs));
    driver::check_module_run(dir_.string(), primitives, inputs, module.kernels(), module.outputs(),
                             [&](const KernelHook& hook) { return module.run(inputs, hook); });
    module.set_graph(true);
    expect_close(want, module.run(inputs));
    expect_close(want, module.run(inputs));
    EXPECT_GE(module.median_ms(2, true), 0.0);
    // What `orch run --profile` and measuring time: events around kernels and around runs.
    std::vector<std::vector<double>> per_kernel = module.kernel_ms(2);
    ASSERT_EQ(per_kernel.size(), 2u);
    EXPECT_EQ(per_kernel[0].size(), module.kernels().size());
    EXPECT_EQ(module.back_to_back_ms(2).size(), 2u);
    expect_close(want, module.run(inputs));
    has_host_kernels_ = module.has_host_kernels();
  }

  fs::path dir_;
  bool has_host_kernels_ = false;
};

// Generated kernels only: the graph is captured once and replayed at every run after.
TEST_F(CudaModuleStandIn, RunsLaunchesAndReplaysTheirGraph) {
  check_module(R"(graph g(%x: f32[4,16], %w: f32[16,8]) {
  %m: f32[4,8] = MatMul(%x, %w)
  %r: f32[4,8] = Relu(%m)
  %s: f32[4,8] = Softmax(%r) {axis = 1}
  return %s
})");
  EXPECT_FALSE(has_host_kernels_);
  // Two runs, median_ms's warm-up and two runs, and the last run.
  EXPECT_EQ(stand().graph_launches, 2 + 3 + 1);
  EXPECT_EQ(stand().copies_in_capture, 0);
}

// A host kernel (TopK) between generated ones: its inputs copied from the device and its
// results back; with set_graph the plan still runs launch by launch, since no capture could
// hold those copies.
TEST_F(CudaModuleStandIn, RunsHostKernelsBetweenCopiesAndCapturesNothing) {
  check_module(R"(graph g(%x: f32[3,8]) {
  const %k = i64[1]{3}
  %a: f32[3,8] = Relu(%x)
  %v: f32[3,3], %i: i64[3,3] = TopK(%a, %k) {axis = 1}
  %r: f32[3,3] = Sigmoid(%v)
  return %r, %i
})");
  EXPECT_TRUE(has_host_kernels_);
  EXPECT_EQ(stand().graph_launches, 0);
  EXPECT_EQ(stand().copies_in_capture, 0);
}

}  // namespace
}  // namespace orch::runtime
