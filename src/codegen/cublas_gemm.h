// A CUDA kernel that is one batched f32 matrix product runs as a cuBLAS call
// (cublasSgemmStridedBatched) instead of generated code, which reached a few percent of the
// GPU's peak on a MatMul before it staged operands in shared memory (driver/cuda_target.h). A
// transpose
// of an operand's last two dims, read by the product alone, is absorbed as cuBLAS's op(T).
//
// Here, shared by the stitcher that finds such kernels (gemm_spec), the CUDA runtime that calls
// cuBLAS (cublas_arguments) and the host check of a CUDA module (sgemm_strided_batched: the
// BLAS contract, column-major, which is how the mapping from orch's row-major tensors to
// cuBLAS's arguments is checked against the interpreter without a GPU).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "ir/graph.h"

namespace orch::codegen {

/// C[b] = op_a(A[b]) x op_b(B[b]) in row-major terms: A is [batch, m, k] ([batch, k, m] when
/// trans_a), B is [batch, k, n] ([batch, n, k] when trans_b), C is [batch, m, n], all dense f32.
/// `a` and `b` are the kernel inputs (indices into the kernel graph's inputs) holding A and B;
/// C is the kernel's only output.
struct GemmSpec {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  int a = 0, b = 0;
  bool operator==(const GemmSpec&) const = default;
};

/// The GEMM `kernel` is, when it is one: a single f32 prim.MatMul writing the kernel's only
/// output, each operand a kernel input or a prim.Transpose of one swapping its last two dims
/// and read by the product alone, every extent within cuBLAS's int. nullopt otherwise.
std::optional<GemmSpec> gemm_spec(const Graph& kernel);

/// "" when `spec` fits tensors of these types (inputs and outputs of its kernel), otherwise why
/// not: the runtime's check of a manifest before it hands cuBLAS any pointer.
std::string gemm_mismatch(const GemmSpec& spec, std::span<const TensorType> inputs,
                          std::span<const TensorType> outputs);

/// The arguments of cublasSgemmStridedBatched (column-major, alpha 1, beta 0) that compute
/// `spec`: cuBLAS sees each row-major matrix as its transpose, so it computes C^T = B^T A^T,
/// `first` and `second` naming which of the spec's operands (0: A, 1: B) it gets as its A and B.
struct CublasGemmArgs {
  bool trans_first = false, trans_second = false;  // CUBLAS_OP_T when true, else CUBLAS_OP_N
  int m = 0, n = 0, k = 0;
  int ld_first = 0, ld_second = 0, ld_c = 0;
  int64_t stride_first = 0, stride_second = 0, stride_c = 0;
  int batch = 0;
  int first = 1, second = 0;
};
CublasGemmArgs cublas_arguments(const GemmSpec& spec);

/// What cublasSgemmStridedBatched computes with `args` (the reference BLAS definition:
/// C[i + j ldc] = sum_l op(A)[i, l] op(B)[l, j], op(X)[i, l] = X[i + l ld] or, transposed,
/// X[l + i ld]), on the host: `first` and `second` are cuBLAS's A and B.
void sgemm_strided_batched(const CublasGemmArgs& args, const float* first, const float* second,
                           float* c);

}  // namespace orch::codegen
