// The benchmark's baseline policies: one kernel per operator, and greedy injective fusion.
#include <gtest/gtest.h>

#include "driver/fusion_policy.h"
#include "fission/fission.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "partition/dag.h"

namespace orch::driver {
namespace {

// MatMul, bias Add, Relu, Softmax, then a Mul by the MatMul's output (two readers).
constexpr const char* kModel = R"(graph g(%x: f32[4,8]) {
  const %w = f32[8,2]{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}
  const %b = f32[2]{0.5, -0.5}
  %h: f32[4,2] = MatMul(%x, %w)
  %hb: f32[4,2] = Add(%h, %b)
  %a: f32[4,2] = Relu(%hb)
  %s: f32[4,2] = Softmax(%a) {axis = 1}
  %y: f32[4,2] = Mul(%s, %a)
  return %y
})";

struct Fissioned {
  Graph graph;
  fission::FissionReport report;
};

Fissioned fissioned() {
  Fissioned f;
  f.graph = fission::fission(parse_graph(kModel), {}, &f.report);
  return f;
}

// The operator of each range's first primitive.
std::vector<NodeId> first_origins(const Fissioned& f, const std::vector<KernelRange>& kernels) {
  std::vector<NodeId> out;
  for (const KernelRange& k : kernels) out.push_back(f.report.origin[k.begin]);
  return out;
}

TEST(FusionPolicy, OperatorPolicyIsOneKernelPerOperator) {
  Fissioned f = fissioned();
  std::vector<KernelRange> kernels = operator_kernels(f.report.origin);
  EXPECT_EQ(first_origins(f, kernels), (std::vector<NodeId>{0, 1, 2, 3, 4}));
  EXPECT_EQ(kernels.front().begin, 0);
  EXPECT_EQ(kernels.back().end, static_cast<int>(f.graph.num_nodes()));
  for (size_t i = 1; i < kernels.size(); ++i) EXPECT_EQ(kernels[i].begin, kernels[i - 1].end);
}

TEST(FusionPolicy, GreedyFusesInjectiveOperatorsIntoTheirProducer) {
  Fissioned f = fissioned();
  std::vector<KernelRange> kernels = greedy_kernels(f.graph, f.report.origin);
  // MatMul + bias Add + Relu; Softmax (it reduces) starts a kernel; the Mul joins it.
  EXPECT_EQ(first_origins(f, kernels), (std::vector<NodeId>{0, 3}));
}

// A MatMul's kernel takes its bias Add (a oneDNN post-op) but not the Sin after it, which only
// Halide could fuse: the MatMul stays oneDNN's.
TEST(FusionPolicy, GreedyFusesIntoALinearKernelOnlyWhatOneDnnTakes) {
  Fissioned f;
  f.graph = fission::fission(parse_graph(R"(graph g(%x: f32[4,8]) {
  const %w = f32[8,2]{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}
  const %b = f32[2]{0.5, -0.5}
  %h: f32[4,2] = MatMul(%x, %w)
  %hb: f32[4,2] = Add(%h, %b)
  %y: f32[4,2] = Sin(%hb)
  return %y
})"),
                             {}, &f.report);
  EXPECT_EQ(first_origins(f, greedy_kernels(f.graph, f.report.origin)),
            (std::vector<NodeId>{0, 2}));
}

TEST(FusionPolicy, RestrictedIdentificationKeepsExactlyTheKernels) {
  Fissioned f = fissioned();
  for (bool greedy : {false, true}) {
    std::vector<KernelRange> kernels =
        greedy ? greedy_kernels(f.graph, f.report.origin) : operator_kernels(f.report.origin);
    IdentifyOptions options;
    restrict_to_kernels(options, kernels);
    KernelIdentification found = identify_kernels(dag_of(f.graph), options);
    std::vector<KernelRange> kept;
    for (const SubgraphCandidates& sub : found.candidates)
      for (const KernelCandidate& c : sub.kept) {
        std::vector<int> members = c.members.to_vector();
        kept.push_back({sub.begin + members.front(), sub.begin + members.back() + 1});
        EXPECT_EQ(static_cast<int>(members.size()), kept.back().end - kept.back().begin);
      }
    EXPECT_EQ(kept, kernels) << (greedy ? "greedy" : "operator");
  }
}

TEST(FusionPolicy, NamesParseBothWays) {
  for (FusionPolicy p : {FusionPolicy::full, FusionPolicy::greedy, FusionPolicy::operator_})
    EXPECT_EQ(parse_fusion_policy(fusion_policy_name(p)), p);
  EXPECT_THROW(parse_fusion_policy("tvm"), Error);
}

}  // namespace
}  // namespace orch::driver
