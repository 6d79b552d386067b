// Private to src/codegen/dnnl: a oneDNN kernel's configuration (dnnl_backend.h), parsed, and the
// channel-blocked activation layout it may ask for.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <dnnl.hpp>

namespace orch::codegen::dnnl_config {

// Where a convolution's activations live. oneDNN picks blocked layouts for its fastest
// convolutions, and the kernel reorders the model's plain tensors into them and back; in the
// plain layout oneDNN runs a convolution as a GEMM instead, with no reorder. Measured on the
// development machine (AVX2, 2 threads): YOLOX-Nano's 1x1 convolutions take 160-260 us plain
// against 260-420 us blocked with the reorders, its 3x3 and depthwise ones are 2-4x faster
// blocked. So both are candidates and the tuner keeps the faster one per kernel.
inline constexpr std::string_view kPlainLayout = "layout=plain";
// Or channel-blocked (nChw16c with AVX-512, nChw8c below), the layout of oneDNN's direct
// convolutions. With AVX-512, oneDNN 2.6 picks its brgemm convolution in channels-last, and the
// reorder from the model's layout into channels-last costs 3x the one into nChw16c. Measured on
// an AMD EPYC with AVX-512, one thread: Candy's 128 -> 128 3x3 convolution at 56x56 takes
// 4.66 ms channels-last + 0.32 ms of reorders, 4.67 ms blocked + 0.11 ms of reorders; its
// 128 -> 64 3x3 one at 112x112 is faster channels-last (9.29 + 0.98 ms against 11.05 + 0.28 ms).
// So this is a third candidate, for single convolutions and chains alike.
inline constexpr std::string_view kBlockedLayout = "layout=blocked";
// How a MatMul's constant weights are stored (reordered once, when the kernel is built). For
// [K, N] weights oneDNN 2.6 picks the row-major layout, and its GEMM is much slower on some
// shapes than with the same weights column-major: ViT-B/16's MLP up-projection (197x768 by
// 768x3072) takes 22.0 ms row-major and 12.8 ms column-major on one thread of the development
// machine (AMD EPYC, AVX2), 12.0 and 7.0 ms on two; its down-projection (197x3072 by 3072x768)
// is the same either way. So both are candidates.
inline constexpr std::string_view kTransposedWeights = "weights=transposed";
// How a convolution adds a tensor of its output's shape (a residual connection): as oneDNN's sum
// post-op, the tensor copied into the destination first (a reorder), instead of a binary post-op.
// oneDNN's GEMM convolution applies a binary post-op element by element: EfficientViT-B1's 16 ->
// 16 1x1 convolution at 256x256 with its bias took 0.23 ms plain and 32 ms with the residual add
// as a binary post-op (x64:gemm:jit; 373 ms channel-blocked), which greedy fusion always builds.
// A sum post-op is GEMM's beta = 1. A candidate, where a convolution's first post-op is such an
// add; the tuner keeps the faster.
inline constexpr std::string_view kResidualSum = "residual=sum";
// Which of the kernel's tensors the module stores channel-blocked, as "stored_blocked=" and a
// comma-separated list of ports: "i<k>" the kernel's k-th input, "o0" its output. Added by the
// stitcher (dnnl_with_stored_blocked), after the configurations above were measured.
inline constexpr std::string_view kStoredBlocked = "stored_blocked=";

struct Config {
  bool plain = false;               // convolutions: the model's layout, no reorders
  bool blocked = false;             // convolutions: channel-blocked activations
  bool transposed_weights = false;  // MatMul: constant weights stored column-major
  bool residual_sum = false;        // convolutions: a leading residual add as a sum post-op
  std::vector<int> blocked_inputs;  // kernel inputs stored channel-blocked
  bool blocked_output = false;      // the kernel's output stored channel-blocked
};

/// The configuration `text` names: at most one of the layout / weights settings above, then
/// optionally the stored-blocked ports, separated by ';'. Throws Error naming what is unknown.
Config parse_config(const std::string& text);

/// `config`'s text with the stored-blocked ports added.
std::string with_stored_blocked(const std::string& config, const std::vector<int>& inputs,
                                bool output);

/// The channel block of oneDNN's blocked activations on this CPU: 16 with AVX-512, else 8.
int64_t channel_block();

/// Activations of `dims` (N, C, spatial...; rank 3 to 5) with the channels in blocks of
/// channel_block().
dnnl::memory::desc blocked_desc(const dnnl::memory::dims& dims);

}  // namespace orch::codegen::dnnl_config
