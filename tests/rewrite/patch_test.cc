// Patches: rebuilding a graph from replacements keeps inputs and output names, drops dead
// nodes, and refuses what would be wrong (a cycle, an output renamed to an input).
#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/text_format.h"
#include "ir/verifier.h"
#include "rewrite/patch.h"

namespace orch::rewrite {
namespace {

constexpr std::string_view kChain = R"(graph main(%x: f32[2], %unused: f32[2]) {
  %a: f32[2] = prim.Elementwise(%x) {fn = "exp"}
  %b: f32[2] = prim.Elementwise(%a) {fn = "neg"}
  %c: f32[2] = prim.Elementwise(%b) {fn = "tanh"}
  return %c
})";

TEST(Patch, ReplacementTakesTheOutputNameAndDeadNodesGo) {
  Graph g = parse_graph(kChain);
  Patch p(g);
  Ref r = p.op("prim.Elementwise", {p.value(g.find_value("a"))}, {{"fn", std::string("relu")}});
  p.replace(g.find_value("c"), r);
  std::optional<Graph> out = apply_patch(g, p);
  ASSERT_TRUE(out.has_value());
  verify(*out);
  EXPECT_EQ(print_graph(*out), print_graph(parse_graph(R"(graph main(%x: f32[2], %unused: f32[2]) {
  %a: f32[2] = prim.Elementwise(%x) {fn = "exp"}
  %c: f32[2] = prim.Elementwise(%a) {fn = "relu"}
  return %c
})")));
}

TEST(Patch, AnOutputCannotBecomeAGraphInput) {
  Graph g = parse_graph(kChain);
  Patch p(g);
  p.replace(g.find_value("c"), p.value(g.find_value("x")));
  EXPECT_FALSE(apply_patch(g, p).has_value());
}

TEST(Patch, ACycleIsRefused) {
  Graph g = parse_graph(kChain);
  Patch p(g);
  // a := relu(c), while c is computed from a.
  Ref r = p.op("prim.Elementwise", {p.value(g.find_value("c"))}, {{"fn", std::string("relu")}});
  p.replace(g.find_value("a"), r);
  EXPECT_FALSE(apply_patch(g, p).has_value());
}

TEST(Patch, TypeMismatchAndInvalidNodesAreErrors) {
  Graph g = parse_graph(kChain);
  Patch p(g);
  Ref wide = p.constant(Tensor(DType::f32, {3}));
  try {
    p.replace(g.find_value("a"), wide);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "patch: 'a' is f32[2], its replacement f32[3]");
  }
  EXPECT_THROW(
      p.op("prim.Elementwise", {p.value(g.find_value("a")), wide}, {{"fn", std::string("add")}}),
      Error);
}

}  // namespace
}  // namespace orch::rewrite
