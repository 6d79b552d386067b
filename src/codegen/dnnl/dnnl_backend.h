// The oneDNN backend: one Linear primitive (batched MatMul, Conv, ConvTranspose) with the layout
// primitives on its operands absorbed as strides and an elementwise epilogue fused as post-ops,
// or a chain of such convolutions (each reading the one before). f32 only. Only src/codegen/dnnl
// includes dnnl.hpp; this header keeps it out of callers.
#pragma once

#include "codegen/kernel.h"

namespace orch::codegen {

/// The oneDNN backend ("dnnl"); its reject() states what it accepts and why not.
const Backend& dnnl_backend();

/// Compiles `kernel` in a configuration: "" (the backend's compile()) or one of dnnl_configs().
std::unique_ptr<Kernel> dnnl_compile(const Graph& kernel, const std::string& config);

/// The configurations besides "" worth measuring for an accepted kernel: "layout=plain" for a
/// convolution that oneDNN can also run in the model's plain layout, without reorders;
/// "layout=blocked" for a convolution or chain that oneDNN can run channel-blocked (nChw16c or
/// nChw8c) where it would pick another layout; "weights=transposed" for a MatMul whose constant
/// weights oneDNN would store row-major; "residual=sum" for a convolution (or chain) whose first
/// post-op adds a tensor of its output's shape, which oneDNN can add as a sum post-op.
std::vector<std::string> dnnl_configs(const Graph& kernel);

/// The tensors of a kernel that its primitives read or write channel-blocked (nChw16c with
/// AVX-512, nChw8c below) in a configuration, and that a module may therefore store blocked, so
/// that the kernel skips its reorder: inputs (by index) read whole as the first convolution's
/// source or as a binary post-op operand of a blocked destination, and the output. Only
/// tensors of whole channel blocks (C a multiple of dnnl_channel_block()) qualify, whose blocked
/// bytes are as many as their plain ones.
struct DnnlBlockedPorts {
  std::vector<int> inputs;
  bool output = false;
  /// oneDNN has only its reference implementation ("ref:any") for some primitive of the kernel
  /// with `inputs` stored blocked: a kernel never measured in that configuration may be hundreds
  /// of times slower there than where it was tuned.
  bool reference_only = false;
};

/// The ports of `kernel` in `config` (one of "" and dnnl_configs()) that may be stored blocked;
/// none when the backend does not accept the kernel.
DnnlBlockedPorts dnnl_blocked_ports(const Graph& kernel, const std::string& config);

/// `config` with `stored` (some of dnnl_blocked_ports()) stored channel-blocked: the kernel then
/// reads and writes those tensors in oneDNN's blocked layout.
std::string dnnl_with_stored_blocked(const std::string& config, const DnnlBlockedPorts& stored);

/// Whether `config` runs the kernel's convolutions channel-blocked ("layout=blocked").
bool dnnl_blocked_layout(const std::string& config);

/// `config` with its convolutions moved from the model's layout ("layout=plain") to the blocked
/// one, so that the module may store its tensors blocked; "" when `config` is not the plain layout.
std::string dnnl_blocked_variant(const std::string& config);

/// The channel block of oneDNN's blocked activations on this CPU: 16 with AVX-512, else 8.
int64_t dnnl_channel_block();

/// Where a oneDNN kernel's time goes (summed over runs), for the benchmark.
struct DnnlStageTimes {
  double reorder_s = 0;    // layout reorders into and out of the primitive
  double primitive_s = 0;  // the MatMuls / convolutions with their post-ops
  int reorders = 0;        // reorders per run
};

/// Compiles `kernel` (which the backend must accept) and runs it `runs` times on `inputs`,
/// timing each stage separately.
DnnlStageTimes time_dnnl_stages(const Graph& kernel, std::span<const Tensor> inputs, int runs);

/// oneDNN's dnnl_sgemm, C[m,n] = A[m,k] B[k,n] row-major: the benchmark's reference.
void dnnl_reference_sgemm(int64_t m, int64_t n, int64_t k, const float* a, const float* b,
                          float* c);

}  // namespace orch::codegen
