// Host emulation: the generated source after the host prelude, plus one trampoline per function
// (the __global__ functions take typed pointers; a trampoline takes them as void*), compiled
// into a shared library in a temporary directory and run one thread at a time (as fibers where
// the code has barriers).
#include "codegen/cuda/cuda_emulate.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <ucontext.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "codegen/cuda/cuda_impl.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

namespace fs = std::filesystem;

using SetFn = void (*)(unsigned, unsigned, unsigned, unsigned);
using CallFn = void (*)(void* const*);
using BarrierFn = void (*)();

// The threads of one block as fibers: each runs until it reaches a barrier or returns, then
// the next runs; a round in which all wait at a barrier releases them. CUDA requires every
// thread of a block to reach each barrier, so a round where some return and some wait is an
// error (on a GPU it would hang or corrupt the block).
constexpr size_t kFiberStack = 64 * 1024;

struct Fibers {
  enum State { running, waiting, done };
  ucontext_t scheduler;
  std::vector<ucontext_t> threads;
  std::vector<State> state;
  std::vector<std::unique_ptr<char[]>> stacks;
  size_t current = 0;
  CallFn call = nullptr;
  void* const* args = nullptr;
};

thread_local Fibers* active = nullptr;

void barrier() {
  if (active == nullptr) {
    // HostKernels runs code with barriers as fibers; reaching one otherwise is a bug here.
    std::fputs("orch: a barrier of emulated CUDA code ran outside the fiber scheduler\n", stderr);
    std::abort();
  }
  Fibers& f = *active;
  f.state[f.current] = Fibers::waiting;
  swapcontext(&f.threads[f.current], &f.scheduler);
}

void fiber_main() {
  Fibers& f = *active;
  f.call(f.args);
  f.state[f.current] = Fibers::done;  // uc_link returns to the scheduler
}

// Runs block `block` of a launch whose code has barriers.
void run_block(Fibers& f, SetFn set, unsigned block, unsigned threads, unsigned blocks,
               const std::string& function) {
  f.threads.resize(threads);
  f.state.assign(threads, Fibers::running);
  while (f.stacks.size() < threads)
    f.stacks.push_back(std::make_unique_for_overwrite<char[]>(kFiberStack));
  for (unsigned t = 0; t < threads; ++t) {
    getcontext(&f.threads[t]);
    f.threads[t].uc_stack.ss_sp = f.stacks[t].get();
    f.threads[t].uc_stack.ss_size = kFiberStack;
    f.threads[t].uc_link = &f.scheduler;
    makecontext(&f.threads[t], fiber_main, 0);
  }
  active = &f;
  for (;;) {
    for (unsigned t = 0; t < threads; ++t) {
      if (f.state[t] == Fibers::done) continue;
      f.state[t] = Fibers::running;
      f.current = t;
      set(block, t, blocks, threads);
      swapcontext(&f.scheduler, &f.threads[t]);
    }
    auto finished = std::count(f.state.begin(), f.state.end(), Fibers::done);
    if (finished == static_cast<std::ptrdiff_t>(threads)) break;
    if (finished != 0) {
      // The waiting fibers are abandoned: their contexts are rebuilt before any other block.
      active = nullptr;
      throw Error(
          fmt::format("{}: block {}: {} of {} threads returned while the others wait at "
                      "a barrier",
                      function, block, finished, threads));
    }
  }
  active = nullptr;
}

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
struct TempDir {
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/orch_cuda_emulate_XXXXXX", base ? base : "/tmp");
    check(mkdtemp(pattern.data()) != nullptr, "cannot create a directory like {}", pattern);
    path = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  fs::path path;
};

struct Library {
  explicit Library(const fs::path& so) : handle(dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL)) {
    if (handle == nullptr)
      throw Error(fmt::format("cannot load the emulated kernels: {}", dlerror()));
  }
  ~Library() { dlclose(handle); }
  void* symbol(const std::string& name) const {
    void* s = dlsym(handle, name.c_str());
    check(s != nullptr, "the emulated kernels lack {}", name);
    return s;
  }
  void* handle;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// A trampoline takes the parameters as void* and converts each to the function's own pointer
// type (orch_any's conversion operators deduce it; an output's is checked, the race check's
// orch_global), so only their number is needed.
constexpr const char* kAnyPointer = R"(
struct orch_any {
  void* p;
  template <typename T> operator T*() const { return static_cast<T*>(p); }
  template <typename T> operator orch_global<T>() const {
    return orch_global_at(static_cast<T*>(p));
  }
};
)";

std::string trampoline(const HostFunction& f) {
  std::string args;
  for (int i = 0; i < f.parameters; ++i)
    args += fmt::format("{}orch_any{{a[{}]}}", i ? ", " : "", i);
  return fmt::format("extern \"C\" void orch_host_{}(void* const* a) {{ {}({}); }}\n", f.name,
                     f.name, args);
}

void check_inputs(const Graph& kernel, std::span<const Tensor> inputs) {
  check(inputs.size() == kernel.inputs().size(), "{} inputs given, the kernel takes {}",
        inputs.size(), kernel.inputs().size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorType& want = kernel.value(kernel.inputs()[i]).type;
    check(inputs[i].dtype() == want.dtype && inputs[i].shape() == want.shape,
          "input {} is {}{}, the kernel takes {}{}", i, dtype_name(inputs[i].dtype()),
          format_shape(inputs[i].shape()), dtype_name(want.dtype), format_shape(want.shape));
  }
}

}  // namespace

struct HostKernels::Impl {
  std::unique_ptr<Library> library;
  SetFn set = nullptr;
  bool barriers = false;                     // the code has __syncthreads: threads run as fibers
  void (*begin_block)(long long) = nullptr;  // starts the race check's record of a block
  int (*take_faults)(char*, int) = nullptr;  // faults since the last call, and the first
  // Lists the buffers the race check watches in the coming launch.
  void (*watch)(void* const*, const long long*, const char* const*, int) = nullptr;
  std::map<std::string, std::pair<CallFn, int>> functions;  // name -> trampoline, parameters
};

HostKernels::HostKernels(const std::string& code, std::span<const HostFunction> functions,
                         const std::string& cxx)
    : impl_(std::make_unique<Impl>()) {
  std::string text = cuda_impl::host_prelude() + code + kAnyPointer;
  for (const HostFunction& f : functions) text += trampoline(f);
  // The library stays mapped after its directory is gone.
  TempDir dir;
  fs::path cc = dir.path / "kernels.cc", so = dir.path / "kernels.so", log = dir.path / "log";
  std::ofstream(cc) << text;
  std::string command =
      fmt::format("{} -std=c++17 -O1 -shared -fPIC -w -o {} {} > {} 2>&1", quote(cxx),
                  quote(so.string()), quote(cc.string()), quote(log.string()));
  if (std::system(command.c_str()) != 0) {
    std::stringstream out;
    out << std::ifstream(log).rdbuf();
    throw Error(fmt::format("the generated CUDA C does not compile on the host ({}):\n{}", cxx,
                            out.str().substr(0, 8000)));
  }
  impl_->library = std::make_unique<Library>(so);
  impl_->set = reinterpret_cast<SetFn>(impl_->library->symbol("orch_emulate_set"));
  impl_->begin_block =
      reinterpret_cast<void (*)(long long)>(impl_->library->symbol("orch_emulate_begin_block"));
  impl_->take_faults =
      reinterpret_cast<int (*)(char*, int)>(impl_->library->symbol("orch_emulate_take_faults"));
  impl_->watch =
      reinterpret_cast<decltype(impl_->watch)>(impl_->library->symbol("orch_emulate_buffers"));
  reinterpret_cast<void (*)(BarrierFn)>(impl_->library->symbol("orch_emulate_set_barrier"))(
      barrier);
  // Warp shuffles are block barriers on the host (the host prelude's orch_shfl_xor).
  impl_->barriers = code.find("__syncthreads") != std::string::npos ||
                    code.find("orch_shfl_xor") != std::string::npos;
  for (const HostFunction& f : functions)
    impl_->functions[f.name] = {
        reinterpret_cast<CallFn>(impl_->library->symbol("orch_host_" + f.name)), f.parameters};
}

HostKernels::~HostKernels() = default;

void HostKernels::launch(const CudaLaunch& launch, std::span<void* const> args,
                         std::span<const WrittenBuffer> written) const {
  auto it = impl_->functions.find(launch.function);
  check(it != impl_->functions.end(), "no host function {}", launch.function);
  auto [call, parameters] = it->second;
  check(static_cast<int>(args.size()) == parameters, "{} takes {} arguments, {} given",
        launch.function, parameters, args.size());
  // What CUDA allows, and what the emulator's per-thread arrays hold.
  check(launch.threads >= 1 && launch.threads <= 1024, "{}: {} threads per block (1 to 1024)",
        launch.function, launch.threads);
  check(launch.shared_bytes >= 0 && launch.shared_bytes <= kCudaMaxSharedBytes,
        "{}: {} bytes of shared memory per block (at most {})", launch.function,
        launch.shared_bytes, kCudaMaxSharedBytes);
  // Counts a launch that threw left behind are not this one's.
  char first[256];
  impl_->take_faults(first, sizeof first);
  std::vector<void*> bases;
  std::vector<long long> bytes;
  std::vector<const char*> names;
  for (const WrittenBuffer& w : written) {
    check(w.arg >= 0 && w.arg < parameters, "{}: no argument {}", launch.function, w.arg);
    bases.push_back(args[w.arg]);
    bytes.push_back(w.bytes);
    names.push_back(w.name.c_str());
  }
  impl_->watch(bases.data(), bytes.data(), names.data(), static_cast<int>(written.size()));
  auto blocks = static_cast<unsigned>(launch.blocks);
  auto threads = static_cast<unsigned>(launch.threads);
  if (impl_->barriers) {
    Fibers fibers;
    fibers.call = call;
    fibers.args = args.data();
    for (unsigned b = 0; b < blocks; ++b) {
      impl_->begin_block(launch.shared_bytes);
      run_block(fibers, impl_->set, b, threads, blocks, launch.function);
    }
  } else {
    for (unsigned b = 0; b < blocks; ++b) {
      impl_->begin_block(launch.shared_bytes);
      for (unsigned t = 0; t < threads; ++t) {
        impl_->set(b, t, blocks, threads);
        call(args.data());
      }
    }
  }
  int faults = impl_->take_faults(first, sizeof first);
  check(faults == 0,
        "{}: {} unsafe operations (races, reads of shared bytes the block never wrote or outside "
        "a staged region, shuffles in a partial warp); the first: {}",
        launch.function, faults, first);
}

void poison(std::span<std::byte> bytes) {
  std::fill(bytes.begin(), bytes.end(), std::byte{0xFF});
}

std::vector<WrittenBuffer> written_buffers(size_t inputs, std::span<const int64_t> output_bytes,
                                           int64_t scratch_bytes) {
  std::vector<WrittenBuffer> written;
  for (size_t o = 0; o < output_bytes.size(); ++o)
    written.push_back({static_cast<int>(inputs + o), output_bytes[o], fmt::format("out{}", o)});
  if (scratch_bytes > 0)
    written.push_back({static_cast<int>(inputs + output_bytes.size()), scratch_bytes, "scratch"});
  return written;
}

std::vector<std::vector<Tensor>> cuda_emulate_all(std::span<const CudaEmulation> runs,
                                                  const std::string& cxx) {
  for (const CudaEmulation& run : runs) check_inputs(*run.kernel, run.inputs);
  std::string code;
  std::vector<HostFunction> functions;
  for (const CudaEmulation& run : runs) {
    code += run.source->code;
    int parameters =
        static_cast<int>(run.kernel->inputs().size() + run.kernel->outputs().size()) + 1;
    for (const CudaLaunch& launch : run.source->launches)
      functions.push_back({launch.function, parameters});
  }
  HostKernels kernels(code, functions, cxx);
  std::vector<std::vector<Tensor>> results;
  for (const CudaEmulation& run : runs) {
    std::vector<Tensor> outputs;
    std::vector<void*> args;
    std::vector<int64_t> output_bytes;
    for (const Tensor& t : run.inputs) args.push_back(const_cast<std::byte*>(t.bytes()));
    for (ValueId v : run.kernel->outputs()) {
      outputs.emplace_back(run.kernel->value(v).type.dtype, run.kernel->value(v).type.shape);
      Tensor& out = outputs.back();
      poison({out.mutable_bytes(), out.nbytes()});
      args.push_back(out.mutable_bytes());
      output_bytes.push_back(static_cast<int64_t>(out.nbytes()));
    }
    // 8-byte words: the scratch values' offsets are aligned, so every element type is.
    std::vector<uint64_t> scratch(static_cast<size_t>((run.source->scratch_bytes + 7) / 8),
                                  ~uint64_t{0});
    args.push_back(scratch.empty() ? nullptr : scratch.data());
    std::vector<WrittenBuffer> written =
        written_buffers(run.inputs.size(), output_bytes, run.source->scratch_bytes);
    for (const CudaLaunch& launch : run.source->launches) kernels.launch(launch, args, written);
    results.push_back(std::move(outputs));
  }
  return results;
}

std::vector<Tensor> cuda_emulate(const Graph& kernel, const CudaKernelSource& source,
                                 std::span<const Tensor> inputs, const std::string& cxx) {
  CudaEmulation run{&kernel, &source, {inputs.begin(), inputs.end()}};
  return cuda_emulate_all(std::span<const CudaEmulation>(&run, 1), cxx)[0];
}

}  // namespace orch::codegen
