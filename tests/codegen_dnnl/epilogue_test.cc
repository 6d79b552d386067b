// Elementwise epilogues fused as oneDNN post-ops, in the shapes fission gives them, after a
// MatMul and after a Conv.
#include "dnnl_test_util.h"

namespace orch::codegen::dnnl_test {
namespace {

using Ints = std::vector<int64_t>;
using Epilogue = ValueId (*)(Net&, ValueId);

struct Case {
  const char* name;
  Epilogue apply;
};

const Case kCases[] = {
    {"relu", [](Net& n, ValueId x) { return n.ew("relu", {x}); }},
    {"leaky_relu", [](Net& n, ValueId x) { return leaky_relu(n, x, 0.1); }},
    {"clip", [](Net& n, ValueId x) { return clip(n, x, -0.5, 0.4); }},
    {"max_zero",
     [](Net& n, ValueId x) {
       return n.ew("max", {x, n.c(0)});
     }},
    {"min_only",
     [](Net& n, ValueId x) {
       return n.ew("min", {n.c(0.3), x});
     }},
    {"sigmoid", [](Net& n, ValueId x) { return n.ew("sigmoid", {x}); }},
    {"tanh", [](Net& n, ValueId x) { return n.ew("tanh", {x}); }},
    {"gelu_erf", [](Net& n, ValueId x) { return gelu(n, x, false); }},
    {"gelu_tanh", [](Net& n, ValueId x) { return gelu(n, x, true); }},
    {"swish", [](Net& n, ValueId x) { return swish(n, x); }},
    {"swish_beta",
     [](Net& n, ValueId x) {
       return n.ew("mul", {n.ew("sigmoid", {n.ew("mul", {x, n.c(1.5)})}), x});
     }},
    {"hardswish", [](Net& n, ValueId x) { return hard_swish(n, x); }},
    {"mish", [](Net& n, ValueId x) { return mish(n, x); }},
    {"softplus", [](Net& n, ValueId x) { return softplus(n, x); }},
    {"elu",
     [](Net& n, ValueId x) {
       ValueId em1 = n.ew("sub", {n.ew("exp", {x}), n.c(1)});
       return n.ew("where", {n.ew("less", {x, n.c(0)}), n.ew("mul", {em1, n.c(0.7)}), x});
     }},
    {"exp", [](Net& n, ValueId x) { return n.ew("exp", {x}); }},
    {"abs_sqrt", [](Net& n, ValueId x) { return n.ew("sqrt", {n.ew("abs", {x})}); }},
    {"square_log",
     [](Net& n, ValueId x) {
       return n.ew("log", {n.ew("add", {n.ew("mul", {x, x}), n.c(1)})});
     }},
    {"neg", [](Net& n, ValueId x) { return n.ew("neg", {x}); }},
    {"scale",
     [](Net& n, ValueId x) {
       return n.ew("mul", {n.c(0.125), x});
     }},
    {"divide",
     [](Net& n, ValueId x) {
       return n.ew("div", {x, n.c(4)});
     }},
    {"shift",
     [](Net& n, ValueId x) {
       return n.ew("sub", {x, n.c(0.25)});
     }},
    {"bias_leaky", [](Net& n, ValueId x) { return leaky_relu(n, n.bias(x, 1, true, 5), 0.1); }},
    {"bias_last_axis_relu",
     [](Net& n, ValueId x) {
       return n.ew("relu", {n.bias(x, static_cast<int64_t>(n.shape(x).size()) - 1, true, 6)});
     }},
    {"residual_add",
     [](Net& n, ValueId x) {
       return n.ew("add", {n.input(n.shape(x)), x});
     }},
    {"residual_mul_sub",
     [](Net& n, ValueId x) {
       ValueId y = n.ew("mul", {x, n.input(n.shape(x))});
       return n.ew("sub", {y, n.input(n.shape(x))});
     }},
    {"transposed_residual",
     [](Net& n, ValueId x) {
       Shape s = n.shape(x);
       std::swap(s[s.size() - 1], s[s.size() - 2]);
       Ints perm(s.size());
       for (size_t d = 0; d < s.size(); ++d) perm[d] = static_cast<int64_t>(d);
       std::swap(perm[s.size() - 1], perm[s.size() - 2]);
       return n.ew("add", {x, n.op("prim.Transpose", {n.input(s)}, {{"perm", perm}})});
     }},
    {"broadcast_max",
     [](Net& n, ValueId x) {
       Shape s = n.shape(x), ones(s.size(), 1);
       ValueId t = n.op("prim.Broadcast", {n.input(ones)}, {{"shape", s}});
       return n.ew("max", {x, t});
     }},
    {"chain",
     [](Net& n, ValueId x) {
       ValueId y = n.ew("relu", {n.bias(x, 1, false, 0)});
       return gelu(n, n.ew("mul", {y, n.c(0.5)}), false);
     }},
};

// Each case gets its own random shapes (seeded by its name).
class DnnlEpilogue : public testing::TestWithParam<Case> {
 protected:
  std::mt19937 rng{static_cast<uint32_t>(std::hash<std::string>()(GetParam().name))};
  Attributes conv_attrs(int64_t stride, int64_t group) {
    int64_t lo = pick(rng, 0, 2), hi = pick(rng, 0, 2);
    return {{"strides", Ints{stride, stride}},
            {"dilations", Ints{1, 1}},
            {"pads", Ints{lo, hi, hi, lo}},
            {"group", group}};
  }
};

TEST_P(DnnlEpilogue, AfterMatMul) {
  Net n;
  int64_t b = pick(rng, 1, 3), m = pick(rng, 1, 40), k = pick(rng, 1, 50), nn = pick(rng, 1, 40);
  ValueId y = n.op("prim.MatMul", {n.input({b, m, k}), n.weights({b, k, nn}, 1)});
  n.b.output(GetParam().apply(n, y));
  expect_matches_interpreter(n.g, 1);
}

TEST_P(DnnlEpilogue, AfterConv) {
  Net n;
  int64_t g = pick(rng, 1, 2), c = g * pick(rng, 1, 8), m = g * pick(rng, 1, 12);
  Shape x = {pick(rng, 1, 2), c, pick(rng, 3, 12), pick(rng, 3, 12)};
  ValueId w = n.weights({m, c / g, 3, 3}, 2);
  ValueId y = n.op("prim.Conv", {n.input(x), w}, conv_attrs(pick(rng, 1, 2), g));
  n.b.output(GetParam().apply(n, y));
  expect_matches_interpreter(n.g, 2);
}

TEST_P(DnnlEpilogue, AfterConvTranspose) {
  Net n;
  int64_t c = pick(rng, 1, 8), m = pick(rng, 1, 8);
  Shape x = {1, c, pick(rng, 2, 8), pick(rng, 2, 8)};
  Attributes attrs = conv_attrs(2, 1);
  attrs["output_padding"] = Ints{1, 0};
  ValueId y = n.op("prim.ConvTranspose", {n.input(x), n.weights({c, m, 3, 3}, 3)}, attrs);
  n.b.output(GetParam().apply(n, y));
  expect_matches_interpreter(n.g, 3);
}

INSTANTIATE_TEST_SUITE_P(PostOps, DnnlEpilogue, testing::ValuesIn(kCases),
                         [](const testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace orch::codegen::dnnl_test
