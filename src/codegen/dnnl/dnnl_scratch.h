// Where a oneDNN kernel keeps what lives only while it runs: its activations reordered into the
// primitives' layouts and back, a chain's tensors between stages, non-constant weights
// reordered. Buffers of each kernel's own would be cold in a module, where each kernel runs once
// per inference between dozens of others; so they are lent, at each run, by one scratch area of
// the running thread that every oneDNN kernel shares, and that the last kernel left in cache.
// Measured on EfficientViT-B1 (AMD EPYC, AVX-512, one thread): its 49 oneDNN kernels took 1.29x
// their time tuned alone with buffers of their own.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include <dnnl.hpp>

namespace orch::codegen {

/// The transient memories of one kernel, laid out one after another in the thread's scratch.
class DnnlTransients {
 public:
  /// A memory of `desc` with no buffer until bind().
  dnnl::memory add(const dnnl::memory::desc& desc, const dnnl::engine& engine);
  /// Points every memory add() made into the calling thread's scratch, grown to fit. The
  /// buffers stay valid until the thread binds another kernel's transients.
  void bind();

 private:
  std::vector<std::pair<dnnl::memory, size_t>> memories_;  // with their offsets
  size_t bytes_ = 0;
};

}  // namespace orch::codegen
