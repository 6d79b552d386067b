#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/text_format.h"
#include "ir/verifier.h"

namespace orch {
namespace {

constexpr std::string_view kSample = R"(graph main(%x: f32[2,3], %"odd name": f32[3]) {
  const %w = f32[3]{0.5, 1, -2}
  const %k = i64[2]{-1, 9223372036854775807}
  %y: f32[2,3] = Mul(%x, %w) @mul0
  %z: f32[2,3] = Add(%y, %"odd name") {alpha = 1.0, f = [0.5, nan, -inf], n = 3, names = ["a", "b\"c"], none = ints[], s = "text", t = i64[2]{1, 2}}
  return %z, %y
}
)";

TEST(TextFormat, PrintParsePrintIsIdentical) {
  Graph g = parse_graph(kSample);
  verify(g);
  EXPECT_EQ(print_graph(g), kSample);
  Graph again = parse_graph(print_graph(g));
  EXPECT_EQ(structural_hash(again), structural_hash(g));
}

TEST(TextFormat, BuilderGraphRoundTrips) {
  Graph g;
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {4}});
  ValueId c = b.constant(Tensor::from_doubles(DType::f32, {4}, std::vector<double>{1, 2, 3, 4}));
  b.output(b.op("Relu", {b.op("Add", {x, c})}));
  verify(g);
  Graph parsed = parse_graph(print_graph(g));
  EXPECT_EQ(print_graph(parsed), print_graph(g));
  EXPECT_EQ(structural_hash(parsed), structural_hash(g));
}

TEST(TextFormat, ErrorsNameTheLine) {
  try {
    parse_graph("graph g(%x: f32[2]) {\n  %y: f32[2] = Add(%x, %q)\n  return %y\n}\n");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "line 2: unknown value '%q'");
  }
}

TEST(TextFormat, WrongWrittenTypeIsAnError) {
  try {
    parse_graph("graph g(%x: f32[2]) {\n  %y: f32[3] = Relu(%x)\n  return %y\n}\n");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "line 2: '%y' is written f32[3] but Relu gives f32[2]");
  }
}

TEST(StructuralHash, IgnoresNamesButNotConstants) {
  Graph a = parse_graph(
      "graph g(%x: f32[2]) {\n const %c = f32[2]{1, 2}\n %y: f32[2] = Add(%x, %c)\n return %y\n}");
  Graph b = parse_graph(
      "graph h(%in: f32[2]) {\n const %w = f32[2]{1, 2}\n %o: f32[2] = Add(%in, %w) @n\n return "
      "%o\n}");
  Graph c = parse_graph(
      "graph g(%x: f32[2]) {\n const %c = f32[2]{1, 3}\n %y: f32[2] = Add(%x, %c)\n return %y\n}");
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_NE(structural_hash(a), structural_hash(c));
}

TEST(StructuralHash, IsStableAcrossRunsAndMachines) {
  // The tuning database is keyed by this hash: a change here invalidates every stored
  // measurement, so it must be deliberate (update the value and say so in the commit).
  Graph g = parse_graph(kSample);
  EXPECT_EQ(format_hash(structural_hash(g)), "f242e47f3c2f7029");
}

}  // namespace
}  // namespace orch
