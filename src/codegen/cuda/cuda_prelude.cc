// The preludes of generated CUDA C: one list of helpers, preceded on the device by NVRTC's
// qualifiers and on the host by definitions of the CUDA names for a serial run.
#include <fmt/format.h>

#include "codegen/cuda/cuda_impl.h"
#include "codegen/cuda/cuda_source.h"

namespace orch::codegen {
namespace cuda_impl {
namespace {

// Math helpers: orch_<name> over float and double, each calling the C library's function
// (which both CUDA's device library and the host's math.h provide).
struct MathHelper {
  const char* name;
  const char* c_name;  // the double version; the float version adds 'f'
  int arity;
};

constexpr MathHelper kMath[] = {
    {"sqrt", "sqrt", 1},   {"exp", "exp", 1},     {"log", "log", 1},     {"erf", "erf", 1},
    {"tanh", "tanh", 1},   {"floor", "floor", 1}, {"ceil", "ceil", 1},   {"round", "rint", 1},
    {"sin", "sin", 1},     {"cos", "cos", 1},     {"tan", "tan", 1},     {"asin", "asin", 1},
    {"acos", "acos", 1},   {"atan", "atan", 1},   {"sinh", "sinh", 1},   {"cosh", "cosh", 1},
    {"asinh", "asinh", 1}, {"acosh", "acosh", 1}, {"atanh", "atanh", 1}, {"abs", "fabs", 1},
    {"pow", "pow", 2},     {"fmod", "fmod", 2}};

// Helpers whose bodies are the same for every type (NaN tests as x != x, so no isnan).
constexpr const char* kGeneric =
    R"(template <class T> ORCH_FN T orch_max(T a, T b) { return (a != a || a >= b) ? a : b; }
template <class T> ORCH_FN T orch_min(T a, T b) { return (a != a || a <= b) ? a : b; }
template <class T> ORCH_FN T orch_sign(T x) { return x < (T)0 ? (T)-1 : x > (T)0 ? (T)1 : x; }
template <class T> ORCH_FN T orch_relu(T x) { return x < (T)0 ? (T)0 : x; }
template <class T> ORCH_FN T orch_iabs(T x) { return x < (T)0 ? (T)(0ULL - (unsigned long long)x) : x; }
template <class T> ORCH_FN bool orch_isinf(T x) { return x == x && x - x != x - x; }
template <class T> ORCH_FN T orch_f2i(double v, T lo, T hi) {
  return v != v ? (T)0 : v <= (double)lo ? lo : v >= (double)hi ? hi : (T)v;
}
ORCH_FN float orch_sigmoid(float x) {
  return x >= 0 ? 1.0f / (1.0f + expf(-x)) : expf(x) / (1.0f + expf(x));
}
ORCH_FN double orch_sigmoid(double x) {
  return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}
// f16 and bf16 as the interpreter converts them (ir/dtype.cc): rounding to nearest even, NaN
// kept quiet, overflow to infinity, f16's subnormals.
ORCH_FN unsigned orch_bits(float x) {
  union { float f; unsigned u; } c;
  c.f = x;
  return c.u;
}
ORCH_FN float orch_float(unsigned u) {
  union { float f; unsigned u; } c;
  c.u = u;
  return c.f;
}
ORCH_FN float orch_h2f(unsigned short h) {
  unsigned sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return orch_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    float m = (float)mantissa * 5.9604644775390625e-8f;
    return sign ? -m : m;
  }
  return orch_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}
ORCH_FN unsigned short orch_f2h(float x) {
  unsigned bits = orch_bits(x), a = bits & 0x7fffffffu;
  unsigned sign = (bits >> 16) & 0x8000u;
  if (a > 0x7f800000u) return (unsigned short)(sign | 0x7e00u);
  if (a >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
  if (a < 0x38800000u) return (unsigned short)(sign | (unsigned)rintf(orch_float(a) * 16777216.0f));
  a += 0xfffu + ((a >> 13) & 1u);
  return (unsigned short)(sign | ((a - (112u << 23)) >> 13));
}
ORCH_FN float orch_b2f(unsigned short b) { return orch_float((unsigned)b << 16); }
ORCH_FN unsigned short orch_f2b(float x) {
  unsigned bits = orch_bits(x);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (unsigned short)(bits >> 16);
}
ORCH_FN float orch_rh(float x) { return orch_h2f(orch_f2h(x)); }
ORCH_FN float orch_rb(float x) { return orch_b2f(orch_f2b(x)); }
template <class T> ORCH_FN bool orch_minus_one(T b) { return (T)-1 < (T)0 && b == (T)-1; }
template <class T> ORCH_FN T orch_idiv(T a, T b) {
  return b == (T)0 ? (T)0 : orch_minus_one(b) ? (T)(0ULL - (unsigned long long)a) : (T)(a / b);
}
template <class T> ORCH_FN T orch_irem(T a, T b) {
  return b == (T)0 || orch_minus_one(b) ? (T)0 : (T)(a % b);
}
template <class T> ORCH_FN T orch_imod(T a, T b) {
  T r = orch_irem(a, b);
  return r != (T)0 && (r < (T)0) != (b < (T)0)
             ? (T)((unsigned long long)r + (unsigned long long)b) : r;
}
ORCH_FN unsigned long long orch_shl(unsigned long long a, unsigned long long b) {
  return b >= 64 ? 0 : a << b;
}
ORCH_FN unsigned long long orch_shr(unsigned long long a, unsigned long long b) {
  return b >= 64 ? 0 : a >> b;
}
template <class T, class E> ORCH_FN T orch_ipow(T base, E e, T lo, T hi) {
  if (e < (E)0) return orch_f2i<T>(pow((double)base, (double)e), lo, hi);
  unsigned long long r = 1, b = (unsigned long long)base;
  for (unsigned long long n = (unsigned long long)e; n != 0; n >>= 1, b *= b)
    if (n & 1) r *= b;
  return (T)r;
}
ORCH_FN long long orch_emod(long long a, long long b) {
  long long m = a % b;
  return m < 0 ? m + b : m;
}
ORCH_FN long long orch_clamp(long long v, long long lo, long long hi) {
  return v < lo ? lo : v > hi ? hi : v;
}
)";

}  // namespace

std::string helper_functions() {
  std::string s;
  for (const MathHelper& m : kMath) {
    for (const char* t : {"float", "double"}) {
      std::string suffix = std::string(t) == "float" ? "f" : "";
      if (m.arity == 1)
        s += fmt::format("ORCH_FN {0} orch_{1}({0} x) {{ return {2}{3}(x); }}\n", t, m.name,
                         m.c_name, suffix);
      else
        s += fmt::format("ORCH_FN {0} orch_{1}({0} x, {0} y) {{ return {2}{3}(x, y); }}\n", t,
                         m.name, m.c_name, suffix);
    }
  }
  return s + kGeneric;
}

std::string host_prelude() {
  return R"p(// Host emulation of generated CUDA C: a launch runs its blocks and threads serially.
#include <math.h>
#include <stdio.h>
#define __global__
#define __launch_bounds__(threads)
#define __device__
#define __forceinline__ inline
#define ORCH_FN static inline
// Shared arrays are per block; the threads of a block run as fibers of one host thread, and
// __syncthreads switches to the next (cuda_emulate.cc).
#define __shared__ static thread_local
struct orch_dim3 {
  unsigned x, y, z;
};
static thread_local orch_dim3 threadIdx, blockIdx, blockDim, gridDim;
extern "C" void orch_emulate_set(unsigned block, unsigned thread, unsigned blocks,
                                 unsigned threads) {
  blockIdx = {block, 0, 0};
  threadIdx = {thread, 0, 0};
  gridDim = {blocks, 1, 1};
  blockDim = {threads, 1, 1};
}
// A block's dynamic shared memory: its arrays lie at offsets of it.
constexpr long long orch_shared_bytes = )p" +
         std::to_string(kCudaMaxSharedBytes) + R"p(;
alignas(16) __shared__ unsigned char orch_shared[orch_shared_bytes];
)p" + host_race_check() +
         R"p(
static void (*orch_barrier)() = nullptr;
extern "C" void orch_emulate_set_barrier(void (*barrier)()) { orch_barrier = barrier; }
static inline void __syncthreads() {
  ++orch_barriers[threadIdx.x];
  orch_barrier();
}
// A read outside its shared array's box is a fault and reads the first element instead.
static inline long long ORCH_IN(long long i, long long n) {
  if (i >= 0 && i < n) return i;
  orch_fault("reads outside a region staged in shared memory (index %lld of %lld)", i, n);
  return 0;
}
// A warp's exchange, through the block: phases that shuffle keep their trip counts uniform
// within a block, so every thread of it shuffles together and a block barrier stands for the
// warp's. It orders no shared memory (on a GPU, __syncwarp would), so it starts no new barrier
// interval for the race check. The device's shuffle names all 32 lanes, so a warp the block
// fills only in part may not shuffle (its missing lanes would hand over what lies here).
static thread_local unsigned long long orch_lanes[1024];
template <class T> static inline T orch_shfl_xor(T v, int lane_mask) {
  if ((threadIdx.x | 31) >= blockDim.x)
    orch_fault("shuffles in a warp the block's %u threads fill in part", blockDim.x);
  T* slot = reinterpret_cast<T*>(orch_lanes);
  slot[threadIdx.x] = v;
  orch_barrier();
  T other = slot[threadIdx.x ^ lane_mask];
  orch_barrier();
  return other;
}
)p" + helper_functions();
}

}  // namespace cuda_impl

std::string cuda_prelude() {
  return "#define ORCH_FN __device__ __forceinline__\n#define ORCH_IN(i, n) (i)\n"
         "extern __shared__ __align__(16) unsigned char orch_shared[];\n"
         "#define ORCH_SHARED(T, name, offset) T* const name = (T*)(orch_shared + (offset))\n"
         "#define ORCH_GLOBAL(T) T*\n"
         "#define ORCH_SCRATCH(T, name, offset) T* const name = (T*)(scratch + (offset))\n"
         "template <class T> ORCH_FN T orch_shfl_xor(T v, int lane_mask) {\n"
         "  return __shfl_xor_sync(0xffffffffu, v, lane_mask);\n}\n" +
         cuda_impl::helper_functions();
}

}  // namespace orch::codegen
