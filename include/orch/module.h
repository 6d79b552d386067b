// The runtime's C++ API: load a module directory written by `orch optimize` and run it.
//
//   orch::Module module = orch::Module::load("out/");
//   std::vector<orch::Tensor> outputs = module.run(inputs);  // one input per module input
//
// A Module is immutable once loaded (kernels, weights, plan) and may be shared by threads; each
// concurrent run needs its own Context (its own arena), so threads run one module at once.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace orch {

/// A named module input or output.
struct TensorSpec {
  std::string name;
  TensorType type;
};

/// A kernel of a loaded module, for hooks and messages.
struct KernelSpec {
  std::string name;                 // "k3"
  std::string backend;              // "halide", "dnnl" or "reference"
  std::string primitives;           // "prim.MatMul #0 + prim.Elementwise #1" (ops, node names)
  std::vector<TensorSpec> outputs;  // the values it writes, by primitive-graph value name
  double planned_us = -1;           // its time measured alone when tuned; < 0: not recorded
};

/// Called after kernel `kernel` ran, with the values it wrote (valid during the call).
using KernelHook = std::function<void(int kernel, std::span<const Tensor> outputs)>;

/// What a KernelHook is given: the values a kernel wrote, in their type's row-major layout (views
/// of the module's buffers, or copies of values the module stores channel-blocked), or nothing
/// (an empty span: for timing kernels, which copies would disturb).
enum class HookOutputs { values, none };

class Module;

/// The per-run state of a module: the intermediate-tensor arena and per-kernel scratch.
class Context {
 public:
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;
  ~Context();

  struct Impl;

 private:
  friend class Module;
  explicit Context(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class Module {
 public:
  /// Loads the module in `dir` (manifest, weights, kernel library). Throws orch::Error naming
  /// the file and the problem when the directory is missing, incomplete or corrupted.
  static Module load(const std::string& dir);

  const std::vector<TensorSpec>& inputs() const;
  const std::vector<TensorSpec>& outputs() const;
  /// The kernels in the order they run.
  const std::vector<KernelSpec>& kernels() const;

  /// A fresh context for running this module (one per concurrently running thread).
  Context new_context() const;

  /// Runs the module on `inputs` (one per module input, in order) and returns its outputs.
  /// Throws orch::Error naming the input on a wrong count, dtype or shape.
  std::vector<Tensor> run(Context& context, std::span<const Tensor> inputs) const;
  /// The same with a context made for this call.
  std::vector<Tensor> run(std::span<const Tensor> inputs) const;
  /// Runs with `after_kernel` called after every kernel (validation, debugging). An exception
  /// it throws stops the run and propagates.
  std::vector<Tensor> run(Context& context, std::span<const Tensor> inputs,
                          const KernelHook& after_kernel,
                          HookOutputs outputs = HookOutputs::values) const;

  /// Worker threads of the kernels, for runs from the calling thread: both backends run on
  /// OpenMP (the Halide kernels' parallel loops, and oneDNN); 0: one per core. oneDNN fixes a
  /// kernel's thread count when it builds it: a new count rebuilds the oneDNN kernels. OpenMP's
  /// idle workers spin for milliseconds unless OMP_WAIT_POLICY=passive is in the environment
  /// when the process starts (the orch tool sets it).
  void set_threads(int threads) const;

  struct Impl;

 private:
  explicit Module(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace orch
