// Shape chains as PyTorch and Paddle exports write them fold into constants at import.
#include <gtest/gtest.h>

#include "frontend/onnx_import.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/text_format.h"
#include "onnx_model_builder.h"

namespace orch::frontend {
namespace {
using namespace testing;

onnx::TensorProto& add_i64_initializer(onnx::ModelProto& model, const std::string& name,
                                       const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& values) {
  onnx::TensorProto& t = *model.mutable_graph()->add_initializer();
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

// y = x.view(x.size(0), -1) + ConstantOfShape([x.size(0), 1], 0.5), with a symbolic batch dim.
onnx::ModelProto view_model() {
  onnx::ModelProto model = empty_model(13);
  add_input(model, "x", {std::string("N"), int64_t{3}, int64_t{4}});
  add_output(model, "y", {std::string("N"), int64_t{12}});
  add_i64_initializer(model, "zero", {}, {0});
  add_i64_initializer(model, "minus_one", {1}, {-1});
  add_i64_initializer(model, "axes0", {1}, {0});
  add_i64_initializer(model, "one", {1}, {1});
  add_node(model, "Shape", {"x"}, {"s"});
  add_int_attr(add_node(model, "Gather", {"s", "zero"}, {"n"}), "axis", 0);
  add_node(model, "Unsqueeze", {"n", "axes0"}, {"n1"});
  add_int_attr(add_node(model, "Concat", {"n1", "minus_one"}, {"target"}), "axis", 0);
  add_node(model, "Reshape", {"x", "target"}, {"flat"});
  add_int_attr(add_node(model, "Concat", {"n1", "one"}, {"fill_shape"}), "axis", 0);
  onnx::NodeProto& fill = add_node(model, "ConstantOfShape", {"fill_shape"}, {"fill"});
  auto* value = fill.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_float_data(0.5f);
  add_node(model, "Add", {"flat", "fill"}, {"y"});
  return model;
}

TEST(ShapeFolding, ShapeChainsBecomeConstants) {
  ImportOptions options;
  options.shapes["x"] = {2, 3, 4};
  Graph graph = import_onnx_bytes(view_model().SerializeAsString(), ".", options);

  ASSERT_EQ(graph.num_nodes(), 2u) << print_graph(graph);
  EXPECT_EQ(graph.node(0).op, "Reshape");
  EXPECT_EQ(graph.node(1).op, "Add");
  ValueId target = graph.node(0).inputs[1];
  ASSERT_TRUE(graph.value(target).is_constant());
  EXPECT_EQ(graph.value(target).constant.to_ints(), (std::vector<int64_t>{2, -1}));
  EXPECT_EQ(graph.value(graph.outputs()[0]).type, (TensorType{DType::f32, {2, 12}}));

  auto inputs = interp::random_inputs(graph, 5);
  Tensor y = interp::interpret(graph, inputs)[0];
  for (int64_t i = 0; i < y.numel(); ++i)
    EXPECT_EQ(y.get(i), static_cast<float>(inputs[0].get(i) + 0.5));
}

TEST(ShapeFolding, OtherBindingsFoldDifferently) {
  ImportOptions options;
  options.shapes["x"] = {5, 3, 4};
  Graph graph = import_onnx_bytes(view_model().SerializeAsString(), ".", options);
  EXPECT_EQ(graph.value(graph.outputs()[0]).type, (TensorType{DType::f32, {5, 12}}));
}

}  // namespace
}  // namespace orch::frontend
