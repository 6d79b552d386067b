// Benchmark of the oneDNN backend: prints markdown tables of MatMul GFLOP/s against dnnl_sgemm on
// the same shapes, and of convolution GFLOP/s for conv shapes of the bundled models with the
// share of kernel time spent in the layout reorders in and out (format_tag::any).
//
//   bench_dnnl [seconds per measurement, default 0.3]
// Times are the best of repeated runs after one warm-up run (the machine may be shared); the
// backend and dnnl_sgemm run alternately so that both see the same load.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "codegen/dnnl/dnnl_backend.h"
#include "ir/builder.h"

namespace orch {
namespace {

using Ints = std::vector<int64_t>;

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  Tensor t(DType::f32, shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = dist(rng);
  return t;
}

template <class F>
double best_seconds(F&& run, double budget) {
  run();
  double best = 1e30, total = 0;
  for (int reps = 0; reps < 3 || total < budget; ++reps) {
    auto start = std::chrono::steady_clock::now();
    run();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s);
    total += s;
  }
  return best;
}

// Best times of `a` and `b` run alternately, so both see the same load on a shared machine.
template <class A, class B>
std::pair<double, double> best_alternating(A&& a, B&& b, double budget) {
  a();
  b();
  double best_a = 1e30, best_b = 1e30, total = 0;
  for (int reps = 0; reps < 3 || total < budget; ++reps) {
    auto start = std::chrono::steady_clock::now();
    a();
    auto mid = std::chrono::steady_clock::now();
    b();
    auto end = std::chrono::steady_clock::now();
    best_a = std::min(best_a, std::chrono::duration<double>(mid - start).count());
    best_b = std::min(best_b, std::chrono::duration<double>(end - mid).count());
    total += std::chrono::duration<double>(end - start).count();
  }
  return {best_a, best_b};
}

struct MatMulShape {
  const char* where;
  int64_t batch, m, n, k;
};

constexpr MatMulShape kMatMuls[] = {
    {"square", 1, 512, 512, 512},
    {"square", 1, 1024, 1024, 1024},
    {"BERT-base QKV/out proj (seq 128)", 1, 128, 768, 768},
    {"BERT-base FFN up", 1, 128, 3072, 768},
    {"BERT-base FFN down", 1, 128, 768, 3072},
    {"BERT-base attention Q K^T (12 heads)", 12, 128, 128, 64},
    {"BERT-base attention P V (12 heads)", 12, 128, 64, 128},
    {"ViT-B/16 proj (197 tokens)", 1, 197, 768, 768},
};

void matmul_table(double budget) {
  std::printf("| MatMul [batch] MxNxK | where | backend GFLOP/s | dnnl_sgemm GFLOP/s | ratio |\n");
  std::printf("|---|---|---:|---:|---:|\n");
  for (const MatMulShape& s : kMatMuls) {
    Shape a_shape = {s.m, s.k}, b_shape = {s.k, s.n};
    if (s.batch > 1) {
      a_shape.insert(a_shape.begin(), s.batch);
      b_shape.insert(b_shape.begin(), s.batch);
    }
    Graph g;
    Builder b(g);
    b.output(b.op("prim.MatMul",
                  {b.input("a", {DType::f32, a_shape}), b.input("b", {DType::f32, b_shape})}));
    std::vector<Tensor> in = {random_tensor(a_shape, 1), random_tensor(b_shape, 2)};
    Tensor out(DType::f32, {s.batch * s.m * s.n});
    Tensor y(DType::f32, g.value(g.outputs()[0]).type.shape);
    std::unique_ptr<codegen::Kernel> kernel = codegen::dnnl_backend().compile(g);
    auto [t_backend, t_sgemm] = best_alternating(
        [&] { kernel->run(in, std::span<Tensor>(&y, 1)); },
        [&] {
          for (int64_t i = 0; i < s.batch; ++i)
            codegen::dnnl_reference_sgemm(s.m, s.n, s.k, in[0].data<float>() + i * s.m * s.k,
                                          in[1].data<float>() + i * s.k * s.n,
                                          out.mutable_data<float>() + i * s.m * s.n);
        },
        2 * budget);
    double flop = 2.0 * s.batch * s.m * s.n * s.k;
    std::printf("| %s%lldx%lldx%lld | %s | %.1f | %.1f | %.0f%% |\n",
                s.batch > 1 ? ("[" + std::to_string(s.batch) + "] ").c_str() : "",
                static_cast<long long>(s.m), static_cast<long long>(s.n),
                static_cast<long long>(s.k), s.where, flop / t_backend * 1e-9,
                flop / t_sgemm * 1e-9, 100 * t_sgemm / t_backend);
  }
}

struct ConvShape {
  const char* where;
  int64_t c, m, size, kernel, stride, pad, group;
  bool bias_leaky;  // YOLOv4's Conv + folded BN bias + LeakyReLU(0.1), fused as post-ops
};

constexpr ConvShape kConvs[] = {
    {"YOLOv4-416 stem", 3, 32, 416, 3, 1, 1, 1, true},
    {"YOLOv4-416 down1", 32, 64, 416, 3, 2, 1, 1, true},
    {"YOLOv4-416 1x1 @208", 64, 64, 208, 1, 1, 0, 1, true},
    {"YOLOv4-416 down2", 64, 128, 208, 3, 2, 1, 1, true},
    {"YOLOv4-416 res 3x3 @104", 64, 64, 104, 3, 1, 1, 1, true},
    {"YOLOv4-416 res 3x3 @52", 128, 128, 52, 3, 1, 1, 1, true},
    {"YOLOv4-416 res 3x3 @26", 256, 256, 26, 3, 1, 1, 1, true},
    {"YOLOv4-416 res 3x3 @13", 512, 512, 13, 3, 1, 1, 1, true},
    {"YOLOv4-416 neck 3x3 @13", 512, 1024, 13, 3, 1, 1, 1, true},
    {"YOLOv4-416 neck 1x1 @13", 1024, 512, 13, 1, 1, 0, 1, true},
    {"YOLOv4-416 head 1x1 @52", 256, 255, 52, 1, 1, 0, 1, false},
    {"Candy-224 conv1 9x9", 3, 32, 232, 9, 1, 0, 1, false},
    {"Candy-224 conv2 3x3 s2", 32, 64, 226, 3, 2, 0, 1, false},
    {"Candy-224 conv3 3x3 s2", 64, 128, 114, 3, 2, 0, 1, false},
    {"Candy-224 residual 3x3", 128, 128, 58, 3, 1, 0, 1, false},
    {"Candy-224 upsample conv 3x3", 128, 64, 114, 3, 1, 0, 1, false},
    {"Candy-224 output 9x9", 32, 3, 232, 9, 1, 0, 1, false},
    {"depthwise 3x3 @56", 128, 128, 56, 3, 1, 1, 128, false},
};

Graph conv_graph(const ConvShape& s) {
  Graph g;
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {1, s.c, s.size, s.size}});
  ValueId w = b.constant(random_tensor({s.m, s.c / s.group, s.kernel, s.kernel}, 3));
  Attributes attrs = {{"strides", Ints{s.stride, s.stride}},
                      {"dilations", Ints{1, 1}},
                      {"pads", Ints{s.pad, s.pad, s.pad, s.pad}},
                      {"group", s.group}};
  ValueId y = b.op("prim.Conv", {x, w}, attrs);
  if (s.bias_leaky) {
    Shape out = g.value(y).type.shape;  // a copy: adding nodes moves the values
    ValueId bias = b.op("prim.Reshape", {b.constant(random_tensor({s.m}, 4))},
                        {{"shape", Ints{1, s.m, 1, 1}}});
    bias = b.op("prim.Broadcast", {bias}, {{"shape", out}});
    y = b.op("prim.Elementwise", {y, bias}, {{"fn", std::string("add")}});
    auto c = [&](double v) { return b.constant(Tensor::scalar(DType::f32, v)); };
    ValueId neg = b.op("prim.Elementwise", {y, c(0)}, {{"fn", std::string("less")}});
    ValueId scaled = b.op("prim.Elementwise", {y, c(0.1)}, {{"fn", std::string("mul")}});
    y = b.op("prim.Elementwise", {neg, scaled, y}, {{"fn", std::string("where")}});
  }
  b.output(y);
  return g;
}

void conv_table(double budget) {
  std::printf("| conv (N=1) | C->M, k, stride, input | GFLOP/s | reorders/run | reorder share |\n");
  std::printf("|---|---|---:|---:|---:|\n");
  for (const ConvShape& s : kConvs) {
    Graph g = conv_graph(s);
    if (std::string why = codegen::dnnl_backend().reject(g); !why.empty()) {
      std::printf("| %s | refused: %s | | | |\n", s.where, why.c_str());
      continue;
    }
    const Shape& out = g.value(g.outputs()[0]).type.shape;
    std::vector<Tensor> in = {random_tensor({1, s.c, s.size, s.size}, 5)};
    Tensor y(DType::f32, out);
    std::unique_ptr<codegen::Kernel> kernel = codegen::dnnl_backend().compile(g);
    double t = best_seconds([&] { kernel->run(in, std::span<Tensor>(&y, 1)); }, budget);
    codegen::DnnlStageTimes stages = codegen::time_dnnl_stages(g, in, 10);
    double flop = 2.0 * out[1] * out[2] * out[3] * (s.c / s.group) * s.kernel * s.kernel;
    std::printf("| %s | %lld->%lld%s, %lldx%lld, s%lld, %lld^2 | %.1f | %d | %.1f%% |\n", s.where,
                static_cast<long long>(s.c), static_cast<long long>(s.m),
                s.group > 1 ? " (depthwise)" : "", static_cast<long long>(s.kernel),
                static_cast<long long>(s.kernel), static_cast<long long>(s.stride),
                static_cast<long long>(s.size), flop / t * 1e-9, stages.reorders,
                100 * stages.reorder_s / (stages.reorder_s + stages.primitive_s));
  }
}

}  // namespace
}  // namespace orch

int main(int argc, char** argv) {
  double budget = argc > 1 ? std::atof(argv[1]) : 0.3;
  const char* threads = std::getenv("OMP_NUM_THREADS");
  std::printf("oneDNN backend benchmark (OMP_NUM_THREADS=%s; best of runs, %.1f s each)\n\n",
              threads != nullptr ? threads : "unset", budget);
  orch::matmul_table(budget);
  std::printf("\n");
  orch::conv_table(budget);
  return 0;
}
