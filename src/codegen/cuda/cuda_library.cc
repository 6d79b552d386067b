// Kernels that a vendor library computes in one call (cuda_source.h).
#include <fmt/format.h>

#include <algorithm>

#include "codegen/cuda/cuda_source.h"
#include "codegen/kernel.h"
#include "ir/error.h"

namespace orch::codegen {

CudaLibraries parse_cuda_libraries(std::string_view list) {
  if (list == "none") return {false, false};
  CudaLibraries allowed{false, false};
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = std::min(list.find(',', start), list.size());
    std::string_view name = list.substr(start, end - start);
    if (name == "cublas")
      allowed.cublas = true;
    else if (name == "cudnn")
      allowed.cudnn = true;
    else
      fail("unknown GPU library '{}' in '{}' (a list of cublas and cudnn, or none)", name, list);
    start = end + 1;
  }
  return allowed;
}

std::optional<LibraryCall> library_call(const Graph& kernel, const CudaLibraries& allowed) {
  if (allowed.cublas)
    if (std::optional<GemmSpec> gemm = gemm_spec(kernel))
      return LibraryCall{"cublas", CudaLaunch{.gemm = gemm}};
  if (allowed.cudnn)
    if (std::optional<ConvSpec> conv = conv_spec(kernel))
      return LibraryCall{"cudnn", CudaLaunch{.conv = conv}};
  return std::nullopt;
}

std::optional<LibraryCall> library_call_of(const Graph& graph, std::span<const NodeId> members,
                                           std::span<const ValueId> outputs,
                                           const CudaLibraries& allowed) {
  // A call computes a MatMul (cuBLAS) or a convolution (cuDNN): most candidates have neither,
  // and are not extracted again to find that out (analytic tuning asks every candidate).
  bool callable = std::any_of(members.begin(), members.end(), [&](NodeId n) {
    const std::string& op = graph.node(n).op;
    return (allowed.cublas && op == "prim.MatMul") || (allowed.cudnn && op == "prim.Conv");
  });
  if (!callable) return std::nullopt;
  return library_call(
      extract_kernel_with_weight_inputs(graph, members, outputs, kLibraryMinWeightBytes), allowed);
}

}  // namespace orch::codegen
