#include "driver/cuda_measure.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <optional>

#include "driver/cuda_target.h"
#include "driver/host_cuda_module.h"
#include "ir/error.h"
#include "orchestrate/orchestrate.h"
#include "partition/dag.h"
#include "runtime/cuda_module.h"
#include "stitch/stitch.h"

namespace orch::driver {
namespace {

namespace fs = std::filesystem;

// The setup cuda_measure_backend was last given: a Backend's functions take the kernel alone.
CudaMeasureSetup& setup() {
  static CudaMeasureSetup s;
  return s;
}

// A fresh directory for one kernel's module, removed with its owner.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "orch-cuda-kernel-XXXXXX").string();
    check(::mkdtemp(pattern.data()) != nullptr, "cannot create a directory like {}", pattern);
    path = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
};

// `kernel` as a module of one kernel: a plan with one candidate, every primitive in it, writing
// the kernel's outputs.
void stitch_alone(const Graph& kernel, const fs::path& dir) {
  Dag dag = dag_of(kernel);
  OrchestrationProblem problem{.num_primitives = dag.size, .primitive_inputs = dag.preds};
  Candidate all{.label = "kernel"};
  all.primitives.resize(static_cast<size_t>(dag.size));
  std::iota(all.primitives.begin(), all.primitives.end(), 0);
  for (int v = 0; v < dag.size; ++v)
    if (dag.is_graph_output[static_cast<size_t>(v)]) problem.graph_outputs.push_back(v);
  all.outputs = problem.graph_outputs;
  problem.candidates = {all};
  Plan plan = orchestrate(problem);
  std::vector<codegen::KernelChoice> choices(1, {.backend = "cuda"});
  stitch::StitchOptions options;
  options.cuda_libraries = setup().libraries;
  stitch::stitch_cuda(kernel, problem, plan, choices, dir.string(), setup().gpu, options);
}

void copy_outputs(std::span<const Tensor> from, std::span<Tensor> to) {
  check(from.size() == to.size(), "the module wrote {} outputs, the kernel has {}", from.size(),
        to.size());
  for (size_t i = 0; i < to.size(); ++i) {
    check(from[i].nbytes() == to[i].nbytes(), "output {} has {} bytes, {} expected", i,
          from[i].nbytes(), to[i].nbytes());
    std::copy_n(from[i].bytes(), to[i].nbytes(), to[i].mutable_bytes());
  }
}

// A kernel's module on the GPU. Loading reads the module whole, so its directory goes at once:
// a child killed later (a timeout) leaves nothing behind.
class GpuKernel : public codegen::Kernel {
 public:
  explicit GpuKernel(const Graph& kernel) : module_(load(kernel)) {}

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    copy_outputs(module_.run(inputs), outputs);
  }

  std::vector<double> device_times_us(int runs) override {
    std::vector<double> us = module_.back_to_back_ms(runs);
    for (double& t : us) t *= 1e3;
    return us;
  }

 private:
  static runtime::CudaModule load(const Graph& kernel) {
    TempDir dir;
    stitch_alone(kernel, dir.path);
    const runtime::CudaDriver* driver = setup().driver;
    return driver ? runtime::CudaModule::load(dir.path.string(), *driver)
                  : runtime::CudaModule::load(dir.path.string());
  }
  runtime::CudaModule module_;
};

// A kernel's module run on the host (its code compiled when loaded): timed on the wall clock by
// the caller.
class HostKernel : public codegen::Kernel {
 public:
  explicit HostKernel(const Graph& kernel) : module_(load(kernel)) {}

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    copy_outputs(module_.run(inputs), outputs);
  }

 private:
  static HostCudaModule load(const Graph& kernel) {
    TempDir dir;
    stitch_alone(kernel, dir.path);
    return HostCudaModule(dir.path.string());
  }
  HostCudaModule module_;
};

std::string reject(const Graph& kernel) {
  std::vector<NodeId> all(kernel.num_nodes());
  std::iota(all.begin(), all.end(), 0);
  return codegen::cuda_reject(cuda_kernel_graph(kernel, all, kernel.outputs()));
}

std::unique_ptr<codegen::Kernel> compile(const Graph& kernel) {
  if (setup().on_host) return std::make_unique<HostKernel>(kernel);
  return std::make_unique<GpuKernel>(kernel);
}

// Reads everything from `fd` until end of file.
std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

const codegen::Backend& cuda_measure_backend(const CudaMeasureSetup& s) {
  setup() = s;
  static const codegen::Backend backend{.name = "cuda", .reject = reject, .compile = compile};
  return backend;
}

schedule::GpuMachine detect_gpu_in_child() {
  int pipe_fds[2];
  check(::pipe(pipe_fds) == 0, "cannot create a pipe to ask for the GPU");
  pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    // "gpu\n" and its description, or why there is none.
    std::optional<schedule::GpuMachine> gpu = schedule::detect_gpu(0);
    std::string why = gpu ? "" : runtime::cuda_unavailable();
    write_all(pipe_fds[1], gpu ? "gpu\n" + schedule::gpu_to_json(*gpu)
                               : (why.empty() ? "the driver's answers are incomplete" : why));
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  if (child < 0) {
    ::close(pipe_fds[0]);
    fail("cannot start a process to ask for the GPU");
  }
  std::string answer = read_all(pipe_fds[0]);
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
        "asking the CUDA driver for the GPU killed the process (status {})", status);
  // Measuring and --gpu this both need the GPU, and one remedy serves both.
  check(answer.starts_with("gpu\n"),
        "no GPU on this machine ({}) to measure CUDA kernels on or to describe (--gpu this): "
        "plan with analytic costs (--compile-only) for a described GPU (--gpu h200, a100 or a "
        "description file)",
        answer);
  return schedule::gpu_from_json(answer.substr(4));
}

}  // namespace orch::driver
