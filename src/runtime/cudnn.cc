#include "runtime/cudnn.h"

#include <fmt/format.h>

#include "ir/error.h"
#include "runtime/dl_symbols.h"

namespace orch::runtime {
namespace {

// cudnn_graph.h and cudnn_cnn.h: statuses and enums are ints, descriptors opaque pointers.
constexpr int kFloat = 0;             // CUDNN_DATA_FLOAT
constexpr int kNchw = 0;              // CUDNN_TENSOR_NCHW
constexpr int kCrossCorrelation = 1;  // CUDNN_CROSS_CORRELATION
constexpr int kFmaMath = 3;           // CUDNN_FMA_MATH: fp32 FMAs, never TF32 tensor cores
constexpr int kRelu = 1;              // CUDNN_ACTIVATION_RELU
constexpr int kIdentity = 5;          // CUDNN_ACTIVATION_IDENTITY
constexpr int kNotPropagateNan = 0;   // CUDNN_NOT_PROPAGATE_NAN
// CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM: the one algorithm the fused call runs with
// the identity activation (cuDNN's documentation of cudnnConvolutionBiasActivationForward).
constexpr int kImplicitPrecompGemm = 1;
constexpr size_t kMaxWorkspace = size_t{256} << 20;
constexpr int kRequestedAlgorithms = 8;

// cudnnConvolutionFwdAlgoPerf_t.
struct AlgorithmPerf {
  int algorithm;
  int status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
};

struct CudnnApi {
  int (*create)(void** handle) = nullptr;
  int (*destroy)(void* handle) = nullptr;
  int (*set_stream)(void* handle, void* stream) = nullptr;
  const char* (*error_string)(int status) = nullptr;
  int (*create_tensor)(void** desc) = nullptr;
  int (*destroy_tensor)(void* desc) = nullptr;
  int (*set_tensor)(void* desc, int dtype, int rank, const int* dims, const int* strides) = nullptr;
  int (*create_filter)(void** desc) = nullptr;
  int (*destroy_filter)(void* desc) = nullptr;
  int (*set_filter)(void* desc, int dtype, int format, int rank, const int* dims) = nullptr;
  int (*create_conv)(void** desc) = nullptr;
  int (*destroy_conv)(void* desc) = nullptr;
  int (*set_conv)(void* desc, int spatial, const int* pads, const int* strides,
                  const int* dilations, int mode, int dtype) = nullptr;
  int (*set_group_count)(void* desc, int groups) = nullptr;
  int (*set_math_type)(void* desc, int math) = nullptr;
  int (*get_algorithm)(void* handle, void* x, void* w, void* conv, void* y, int requested,
                       int* returned, AlgorithmPerf* perf) = nullptr;
  int (*workspace_size)(void* handle, void* x, void* w, void* conv, void* y, int algorithm,
                        size_t* bytes) = nullptr;
  int (*forward)(void* handle, const void* alpha, void* x_desc, const void* x, void* w_desc,
                 const void* w, void* conv, int algorithm, void* workspace, size_t workspace_bytes,
                 const void* beta, void* y_desc, void* y) = nullptr;
  int (*create_activation)(void** desc) = nullptr;
  int (*destroy_activation)(void* desc) = nullptr;
  int (*set_activation)(void* desc, int mode, int nan, double coef) = nullptr;
  int (*bias_activation_forward)(void* handle, const void* alpha1, void* x_desc, const void* x,
                                 void* w_desc, const void* w, void* conv, int algorithm,
                                 void* workspace, size_t workspace_bytes, const void* alpha2,
                                 void* z_desc, const void* z, void* bias_desc, const void* bias,
                                 void* activation, void* y_desc, void* y) = nullptr;
  std::string why;  // "" when loaded
};

CudnnApi load_api() {
  CudnnApi api;
  void* handle = open_first({"libcudnn.so.9"});
  if (handle == nullptr) {
    api.why = "no cuDNN 9 (libcudnn.so.9 not found: add its folder to the library path)";
    return api;
  }
  std::string missing;
  load_symbol(handle, "cudnnCreate", api.create, missing);
  load_symbol(handle, "cudnnDestroy", api.destroy, missing);
  load_symbol(handle, "cudnnSetStream", api.set_stream, missing);
  load_symbol(handle, "cudnnGetErrorString", api.error_string, missing);
  load_symbol(handle, "cudnnCreateTensorDescriptor", api.create_tensor, missing);
  load_symbol(handle, "cudnnDestroyTensorDescriptor", api.destroy_tensor, missing);
  load_symbol(handle, "cudnnSetTensorNdDescriptor", api.set_tensor, missing);
  load_symbol(handle, "cudnnCreateFilterDescriptor", api.create_filter, missing);
  load_symbol(handle, "cudnnDestroyFilterDescriptor", api.destroy_filter, missing);
  load_symbol(handle, "cudnnSetFilterNdDescriptor", api.set_filter, missing);
  load_symbol(handle, "cudnnCreateConvolutionDescriptor", api.create_conv, missing);
  load_symbol(handle, "cudnnDestroyConvolutionDescriptor", api.destroy_conv, missing);
  load_symbol(handle, "cudnnSetConvolutionNdDescriptor", api.set_conv, missing);
  load_symbol(handle, "cudnnSetConvolutionGroupCount", api.set_group_count, missing);
  load_symbol(handle, "cudnnSetConvolutionMathType", api.set_math_type, missing);
  load_symbol(handle, "cudnnGetConvolutionForwardAlgorithm_v7", api.get_algorithm, missing);
  load_symbol(handle, "cudnnGetConvolutionForwardWorkspaceSize", api.workspace_size, missing);
  load_symbol(handle, "cudnnConvolutionForward", api.forward, missing);
  load_symbol(handle, "cudnnCreateActivationDescriptor", api.create_activation, missing);
  load_symbol(handle, "cudnnDestroyActivationDescriptor", api.destroy_activation, missing);
  load_symbol(handle, "cudnnSetActivationDescriptor", api.set_activation, missing);
  load_symbol(handle, "cudnnConvolutionBiasActivationForward", api.bias_activation_forward,
              missing);
  if (!missing.empty()) api.why = fmt::format("libcudnn lacks {}", missing);
  return api;
}

const CudnnApi& api() {
  static const CudnnApi loaded = load_api();
  check(loaded.why.empty(), "{}", loaded.why);
  return loaded;
}

void cudnn_check(int status, std::string_view what) {
  if (status == 0) return;  // CUDNN_STATUS_SUCCESS
  fail("{}: cuDNN status {} ({})", what, status, api().error_string(status));
}

}  // namespace

Cudnn::Cudnn(void* stream) {
  cudnn_check(api().create(&handle_), "creating a cuDNN handle");
  cudnn_check(api().set_stream(handle_, stream), "binding cuDNN to the module's stream");
}

Cudnn::~Cudnn() {
  if (handle_ != nullptr) api().destroy(handle_);
}

Cudnn::Conv::~Conv() {
  const CudnnApi& a = api();
  if (x_ != nullptr) a.destroy_tensor(x_);
  if (y_ != nullptr) a.destroy_tensor(y_);
  if (w_ != nullptr) a.destroy_filter(w_);
  if (conv_ != nullptr) a.destroy_conv(conv_);
  if (bias_ != nullptr) a.destroy_tensor(bias_);
  if (activation_ != nullptr) a.destroy_activation(activation_);
}

std::unique_ptr<Cudnn::Conv> Cudnn::prepare(const codegen::CudnnConvArgs& args,
                                            std::string_view kernel) const {
  const CudnnApi& a = api();
  std::string what = fmt::format("describing kernel {}'s convolution to cuDNN", kernel);
  std::unique_ptr<Conv> c(new Conv);
  int rank = static_cast<int>(args.x_dims.size());
  cudnn_check(a.create_tensor(&c->x_), what);
  cudnn_check(a.set_tensor(c->x_, kFloat, rank, args.x_dims.data(), args.x_strides.data()), what);
  cudnn_check(a.create_tensor(&c->y_), what);
  cudnn_check(a.set_tensor(c->y_, kFloat, rank, args.y_dims.data(), args.y_strides.data()), what);
  cudnn_check(a.create_filter(&c->w_), what);
  cudnn_check(a.set_filter(c->w_, kFloat, kNchw, rank, args.w_dims.data()), what);
  cudnn_check(a.create_conv(&c->conv_), what);
  cudnn_check(a.set_conv(c->conv_, rank - 2, args.pads.data(), args.strides.data(),
                         args.dilations.data(), kCrossCorrelation, kFloat),
              what);
  cudnn_check(a.set_group_count(c->conv_, args.group), what);
  cudnn_check(a.set_math_type(c->conv_, kFmaMath), what);
  if (!args.bias_dims.empty()) {
    cudnn_check(a.create_tensor(&c->bias_), what);
    cudnn_check(
        a.set_tensor(c->bias_, kFloat, rank, args.bias_dims.data(), args.bias_strides.data()),
        what);
    cudnn_check(a.create_activation(&c->activation_), what);
    cudnn_check(
        a.set_activation(c->activation_, args.relu ? kRelu : kIdentity, kNotPropagateNan, 0.0),
        what);
  }
  if (c->bias_ != nullptr && !args.relu) {
    c->algorithm_ = kImplicitPrecompGemm;
  } else {
    AlgorithmPerf perf[kRequestedAlgorithms];
    int returned = 0;
    cudnn_check(a.get_algorithm(handle_, c->x_, c->w_, c->conv_, c->y_, kRequestedAlgorithms,
                                &returned, perf),
                what);
    int chosen = -1;
    for (int i = 0; i < returned && chosen < 0; ++i)
      if (perf[i].status == 0 && perf[i].memory <= kMaxWorkspace) chosen = i;
    check(chosen >= 0, "{}: no algorithm within {} MiB of workspace", what, kMaxWorkspace >> 20);
    c->algorithm_ = perf[chosen].algorithm;
  }
  cudnn_check(
      a.workspace_size(handle_, c->x_, c->w_, c->conv_, c->y_, c->algorithm_, &c->workspace_bytes_),
      what);
  return c;
}

void Cudnn::forward(const Conv& c, CuDevicePtr x, CuDevicePtr w, CuDevicePtr bias, CuDevicePtr y,
                    CuDevicePtr workspace, std::string_view kernel) const {
  const float one = 1, zero = 0;
  auto in = [](CuDevicePtr p) { return reinterpret_cast<const void*>(p); };
  void* out = reinterpret_cast<void*>(y);
  void* scratch = reinterpret_cast<void*>(workspace);
  // The fused call adds alpha2 z; with alpha2 0, z is y (cuDNN reads no z then).
  int status =
      c.bias_ == nullptr
          ? api().forward(handle_, &one, c.x_, in(x), c.w_, in(w), c.conv_, c.algorithm_, scratch,
                          c.workspace_bytes_, &zero, c.y_, out)
          : api().bias_activation_forward(handle_, &one, c.x_, in(x), c.w_, in(w), c.conv_,
                                          c.algorithm_, scratch, c.workspace_bytes_, &zero, c.y_,
                                          out, c.bias_, in(bias), c.activation_, c.y_, out);
  if (status != 0) cudnn_check(status, fmt::format("kernel {}'s convolution", kernel));
}

}  // namespace orch::runtime
