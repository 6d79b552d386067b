#include <gtest/gtest.h>

#include <vector>

#include "interp/interpreter.h"
#include "ir/error.h"
#include "ir/text_format.h"

namespace orch {
namespace {

TEST(Interpreter, RunsNodesInOrder) {
  Graph g = parse_graph(R"(graph g(%x: f32[3]) {
    const %c = f32[3]{1, -5, 2}
    %s: f32[3] = Add(%x, %c)
    %y: f32[3] = Relu(%s)
    return %y
  })");
  std::vector<Tensor> in = {Tensor::from_doubles(DType::f32, {3}, std::vector<double>{1, 2, 3})};
  auto out = interp::interpret(g, in);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{2, 0, 5}));
}

TEST(Interpreter, WrongInputShapeNamesTheInput) {
  Graph g = parse_graph("graph g(%x: f32[3]) {\n %y: f32[3] = Relu(%x)\n return %y\n}");
  std::vector<Tensor> in = {Tensor(DType::f32, {4})};
  try {
    interp::interpret(g, in);
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "input 'x' is f32[4], the model expects f32[3]");
  }
}

// Run on demand, a value lives while a node not run reads it or a hold on it is not released:
// the memory of a module's validation is that of the live values.
TEST(Interpretation, AValueIsFreedOnceItsReadersRanAndItsHoldsAreReleased) {
  Graph g = parse_graph(R"(graph g(%x: f32[3]) {
    %a: f32[3] = Relu(%x)
    %b: f32[3] = Neg(%a)
    %c: f32[3] = Abs(%b)
    return %c
  })");
  std::vector<Tensor> in = {Tensor::from_doubles(DType::f32, {3}, std::vector<double>{1, -2, 3})};
  std::vector<int> holds(g.num_values(), 0);
  ++holds[g.find_value("a")];
  ++holds[g.find_value("c")];
  interp::Interpretation run(g, in, holds);
  EXPECT_EQ(run.value(g.find_value("a")).to_doubles(), (std::vector<double>{1, 0, 3}));
  EXPECT_EQ(run.value(g.find_value("c")).to_doubles(), (std::vector<double>{1, 0, 3}));
  EXPECT_EQ(run.value(g.find_value("a")).to_doubles(), (std::vector<double>{1, 0, 3}))
      << "held, though Neg has read it";
  run.release(g.find_value("a"));
  EXPECT_THROW(run.value(g.find_value("a")), Error);
  EXPECT_THROW(run.value(g.find_value("b")), Error) << "read by Abs, never held";
  EXPECT_EQ(run.value(g.find_value("x")).to_doubles(), (std::vector<double>{1, -2, 3}));
}

}  // namespace
}  // namespace orch
