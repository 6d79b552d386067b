#include "runtime/cublas.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "runtime/dl_symbols.h"

namespace orch::runtime {
namespace {

// cublas_api.h: cublasStatus_t and cublasOperation_t are ints, the handle an opaque pointer.
struct CublasApi {
  int (*create)(void** handle) = nullptr;
  int (*destroy)(void* handle) = nullptr;
  int (*set_stream)(void* handle, void* stream) = nullptr;
  int (*sgemm_strided_batched)(void* handle, int trans_a, int trans_b, int m, int n, int k,
                               const float* alpha, const float* a, int lda, long long stride_a,
                               const float* b, int ldb, long long stride_b, const float* beta,
                               float* c, int ldc, long long stride_c, int batch) = nullptr;
  const char* (*status_string)(int status) = nullptr;
  std::string why;  // "" when loaded
};

CublasApi load_api() {
  CublasApi api;
  // CUDA 13's, then 12's: the cubin's driver accepts either.
  void* handle = open_first({"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
  if (handle == nullptr) {
    api.why =
        "no cuBLAS (libcublas.so.13 not found: add the CUDA toolkit's lib64 to the "
        "library path)";
    return api;
  }
  std::string missing;
  load_symbol(handle, "cublasCreate_v2", api.create, missing);
  load_symbol(handle, "cublasDestroy_v2", api.destroy, missing);
  load_symbol(handle, "cublasSetStream_v2", api.set_stream, missing);
  load_symbol(handle, "cublasSgemmStridedBatched", api.sgemm_strided_batched, missing);
  load_symbol(handle, "cublasGetStatusString", api.status_string, missing);
  if (!missing.empty()) api.why = fmt::format("libcublas lacks {}", missing);
  return api;
}

const CublasApi& api() {
  static const CublasApi loaded = load_api();
  check(loaded.why.empty(), "{}", loaded.why);
  return loaded;
}

void cublas_check(int status, std::string_view what) {
  if (status == 0) return;  // CUBLAS_STATUS_SUCCESS
  fail("{}: cuBLAS status {} ({})", what, status, api().status_string(status));
}

}  // namespace

Cublas::Cublas(void* stream) {
  cublas_check(api().create(&handle_), "creating a cuBLAS handle");
  cublas_check(api().set_stream(handle_, stream), "binding cuBLAS to the module's stream");
}

Cublas::~Cublas() {
  if (handle_ != nullptr) api().destroy(handle_);
}

void Cublas::sgemm(const codegen::CublasGemmArgs& g, CuDevicePtr first, CuDevicePtr second,
                   CuDevicePtr c, std::string_view kernel) const {
  const float one = 1, zero = 0;
  // CUBLAS_OP_T is 1, CUBLAS_OP_N 0; alpha and beta are host pointers (the default mode).
  int status = api().sgemm_strided_batched(
      handle_, g.trans_first ? 1 : 0, g.trans_second ? 1 : 0, g.m, g.n, g.k, &one,
      reinterpret_cast<const float*>(first), g.ld_first, g.stride_first,
      reinterpret_cast<const float*>(second), g.ld_second, g.stride_second, &zero,
      reinterpret_cast<float*>(c), g.ld_c, g.stride_c, g.batch);
  if (status != 0) cublas_check(status, fmt::format("kernel {}'s GEMM", kernel));
}

}  // namespace orch::runtime
