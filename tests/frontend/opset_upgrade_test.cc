// Old-opset models import into the opset-17 form with the old semantics. Expected values are
// computed here from the old operator definitions, independently of the rewrite.
#include <gtest/gtest.h>

#include <cmath>

#include "frontend/onnx_import.h"
#include "interp/interpreter.h"
#include "interp/kernel.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/text_format.h"
#include "onnx_model_builder.h"

namespace orch::frontend {
namespace {

using namespace testing;

std::vector<double> iota(int64_t n, double scale) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) * scale - 1;
  return v;
}

std::vector<double> run(const Graph& g, std::vector<Tensor> inputs) {
  return interp::interpret(g, inputs)[0].to_doubles();
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "at " << i;
}

TEST(OpsetUpgrade, SqueezeAxesAttributeBecomesConstantInput) {
  onnx::ModelProto model = empty_model(11);
  add_input(model, "x", {1, 3});
  add_ints_attr(add_node(model, "Squeeze", {"x"}, {"y"}, "sq"), "axes", {0});
  add_output(model, "y", {3});
  Graph g = import(model);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& node = g.node(0);
  EXPECT_FALSE(has_attr(node.attrs, "axes"));
  ASSERT_EQ(node.inputs.size(), 2u);
  const Value& axes = g.value(node.inputs[1]);
  ASSERT_TRUE(axes.is_constant());
  EXPECT_EQ(axes.constant.to_ints(), (std::vector<int64_t>{0}));
  EXPECT_EQ(g.value(g.outputs()[0]).type, (TensorType{DType::f32, {3}}));
}

// Softmax-11 over axis 1 of [2,3,4] normalizes each batch's 12 values together.
TEST(OpsetUpgrade, CoercedSoftmaxNormalizesTheFlattenedTail) {
  onnx::ModelProto model = empty_model(11);
  add_input(model, "x", {2, 3, 4});
  add_int_attr(add_node(model, "Softmax", {"x"}, {"y"}, "sm"), "axis", 1);
  add_output(model, "y", {2, 3, 4});
  Graph g = import(model);
  std::vector<double> x = iota(24, 0.25);
  std::vector<double> want(24);
  for (int b = 0; b < 2; ++b) {
    double sum = 0;
    for (int i = 0; i < 12; ++i) sum += std::exp(x[b * 12 + i]);
    for (int i = 0; i < 12; ++i) want[b * 12 + i] = std::exp(x[b * 12 + i]) / sum;
  }
  expect_near(run(g, {Tensor::from_doubles(DType::f32, {2, 3, 4}, x)}), want);
  EXPECT_EQ(g.value(g.outputs()[0]).name, "y");
}

TEST(OpsetUpgrade, CoercedSoftmaxOnTheLastAxisNeedsNoReshape) {
  onnx::ModelProto model = empty_model(6);
  add_input(model, "x", {2, 5});
  add_int_attr(add_node(model, "LogSoftmax", {"x"}, {"y"}, "lsm"), "axis", 1);
  add_output(model, "y", {2, 5});
  Graph g = import(model);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(attr_int(g.node(0).attrs, "axis", 0), -1);
}

// Add-6 with broadcast=1, axis=1: B [3] lines up with dim 1 of A [2,3,4].
TEST(OpsetUpgrade, LegacyBroadcastAlignsAtAxis) {
  onnx::ModelProto model = empty_model(6);
  add_input(model, "a", {2, 3, 4});
  add_float_initializer(model, "b", {3}, {10, 20, 30});
  auto& node = add_node(model, "Add", {"a", "b"}, {"y"}, "add");
  add_int_attr(node, "broadcast", 1);
  add_int_attr(node, "axis", 1);
  add_output(model, "y", {2, 3, 4});
  Graph g = import(model);
  std::vector<double> a = iota(24, 1);
  std::vector<double> want(24);
  for (int i = 0; i < 24; ++i) want[i] = a[i] + 10 * ((i / 4) % 3 + 1);
  expect_near(run(g, {Tensor::from_doubles(DType::f32, {2, 3, 4}, a)}), want);
}

// PRelu-6 applies a [C] slope along dim 1.
TEST(OpsetUpgrade, OldPReluSlopeIsPerChannel) {
  onnx::ModelProto model = empty_model(6);
  add_input(model, "x", {1, 2, 3});
  add_float_initializer(model, "slope", {2}, {0.5f, 2.0f});
  add_node(model, "PRelu", {"x", "slope"}, {"y"}, "prelu");
  add_output(model, "y", {1, 2, 3});
  Graph g = import(model);
  std::vector<double> x = {-1, -2, 3, -4, 5, -6};
  expect_near(run(g, {Tensor::from_doubles(DType::f32, {1, 2, 3}, x)}), {-0.5, -1, 3, -8, 5, -12});
}

TEST(OpsetUpgrade, PadAndClipAttributesBecomeInputs) {
  onnx::ModelProto model = empty_model(6);
  add_input(model, "x", {1, 2});
  auto& pad = add_node(model, "Pad", {"x"}, {"p"}, "pad");
  add_ints_attr(pad, "pads", {0, 1, 0, 2});
  add_float_attr(pad, "value", 9);
  auto& clip = add_node(model, "Clip", {"p"}, {"y"}, "clip");
  add_float_attr(clip, "min", -1);
  add_float_attr(clip, "max", 5);
  add_output(model, "y", {1, 5});
  Graph g = import(model);
  expect_near(run(g, {Tensor::from_doubles(DType::f32, {1, 2}, std::vector<double>{-3, 2})}),
              {5, -1, 2, 5, 5});
}

TEST(OpsetUpgrade, SliceSplitTopKReshapeAttributes) {
  onnx::ModelProto model = empty_model(1);
  add_input(model, "x", {2, 6});
  auto& slice = add_node(model, "Slice", {"x"}, {"s"}, "slice");
  add_ints_attr(slice, "starts", {1});
  add_ints_attr(slice, "ends", {5});
  add_ints_attr(slice, "axes", {1});
  auto& split = add_node(model, "Split", {"s"}, {"lo", "hi"}, "split");
  add_int_attr(split, "axis", 1);
  add_ints_attr(split, "split", {1, 3});
  auto& topk = add_node(model, "TopK", {"hi"}, {"values", "indices"}, "topk");
  add_int_attr(topk, "k", 2);
  add_ints_attr(add_node(model, "Reshape", {"values"}, {"y"}, "reshape"), "shape", {4});
  add_output(model, "y", {4});
  Graph g = import(model);
  std::vector<double> x = {0, 1, 2, 3, 4, 5, 60, 61, 62, 63, 64, 65};
  // Row slices [1,5) are {1,2,3,4} and {61..64}; hi = {2,3,4} and {62,63,64}; top 2 of each.
  expect_near(run(g, {Tensor::from_doubles(DType::f32, {2, 6}, x)}), {4, 3, 64, 63});
}

TEST(OpsetUpgrade, UpsampleBecomesResize) {
  onnx::ModelProto model = empty_model(7);
  add_input(model, "x", {1, 1, 1, 2});
  auto& node = add_node(model, "Upsample", {"x"}, {"y"}, "up");
  auto* scales = node.add_attribute();
  scales->set_name("scales");
  scales->set_type(onnx::AttributeProto::FLOATS);
  for (float s : {1.0f, 1.0f, 2.0f, 2.0f}) scales->add_floats(s);
  add_output(model, "y", {1, 1, 2, 4});
  Graph g = import(model);
  ASSERT_EQ(g.node(0).op, "Resize");
  expect_near(run(g, {Tensor::from_doubles(DType::f32, {1, 1, 1, 2}, std::vector<double>{1, 2})}),
              {1, 1, 2, 2, 1, 1, 2, 2});
}

TEST(OpsetUpgrade, DropoutAndBatchNormLegacyAttributesAreDropped) {
  onnx::ModelProto model = empty_model(1);
  add_input(model, "x", {1, 2});
  auto& dropout = add_node(model, "Dropout", {"x"}, {"d"}, "dropout");
  add_int_attr(dropout, "is_test", 1);
  add_float_attr(dropout, "ratio", 0.3f);
  for (auto [name, value] :
       {std::pair{"scale", 2.0f}, {"bias", 1.0f}, {"mean", 0.0f}, {"var", 1.0f}})
    add_float_initializer(model, name, {2}, {value, value});
  auto& bn =
      add_node(model, "BatchNormalization", {"d", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  add_int_attr(bn, "is_test", 1);
  add_int_attr(bn, "spatial", 1);
  add_ints_attr(bn, "consumed_inputs", {0, 0, 0, 1, 1});
  add_float_attr(bn, "epsilon", 0);
  add_output(model, "y", {1, 2});
  Graph g = import(model);
  std::string text = print_graph(g);
  for (const char* gone : {"is_test", "ratio", "spatial", "consumed_inputs"})
    EXPECT_EQ(text.find(gone), std::string::npos) << text;
  expect_near(run(g, {Tensor::from_doubles(DType::f32, {1, 2}, std::vector<double>{1, -1})}),
              {3, -1});
}

TEST(OpsetUpgrade, ScatterBecomesScatterElements) {
  onnx::ModelProto model = empty_model(10);
  add_input(model, "data", {1, 3});
  add_input(model, "indices", {1, 1}, onnx::TensorProto::INT64);
  add_input(model, "updates", {1, 1});
  add_int_attr(add_node(model, "Scatter", {"data", "indices", "updates"}, {"y"}, "sc"), "axis", 1);
  add_output(model, "y", {1, 3});
  Graph g = import(model);
  EXPECT_EQ(g.node(0).op, "ScatterElements");
}

}  // namespace
}  // namespace orch::frontend
