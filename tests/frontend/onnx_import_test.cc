// Import features: constants, known inputs, folding, dim binding, declared inputs, export.
#include <gtest/gtest.h>

#include <fstream>

#include "frontend/onnx_export.h"
#include "frontend/onnx_import.h"
#include "interp/interpreter.h"
#include "interp/kernel.h"
#include "ir/error.h"
#include "ir/hash.h"
#include "ir/op_registry.h"
#include "ir/text_format.h"
#include "onnx_model_builder.h"

namespace orch::frontend {
namespace {

using namespace testing;

onnx::TensorProto int64_tensor(const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

void add_tensor_attr(onnx::NodeProto& node, const std::string& name, onnx::TensorProto t) {
  auto* attr = node.add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::TENSOR);
  *attr->mutable_t() = std::move(t);
}

TEST(OnnxImport, ConstantNodesBecomeConstants) {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {3});
  add_float_attr(add_node(model, "Constant", {}, {"c1"}), "value_float", 2.5f);
  add_ints_attr(add_node(model, "Constant", {}, {"c2"}), "value_ints", {1, 2, 3});
  add_tensor_attr(add_node(model, "Constant", {}, {"c3"}), "value", int64_tensor({7}));
  add_node(model, "Add", {"x", "c1"}, {"y"});
  add_output(model, "y", {3});
  add_output(model, "c2", {3}, onnx::TensorProto::INT64);
  add_output(model, "c3", {1}, onnx::TensorProto::INT64);
  Graph g = import(model);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Value& c1 = g.value(g.node(0).inputs[1]);
  ASSERT_TRUE(c1.is_constant());
  EXPECT_EQ(c1.type, (TensorType{DType::f32, {}}));
  EXPECT_EQ(c1.constant.get(0), 2.5);
  EXPECT_EQ(g.value(g.outputs()[1]).constant.to_ints(), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(g.value(g.outputs()[2]).constant.to_ints(), (std::vector<int64_t>{7}));
}

// Shape -> Gather -> Reshape's shape input folds to a constant, under the original names.
TEST(OnnxImport, ShapeChainsFoldEvenWithoutFolding) {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2, 3, 4});
  add_node(model, "Shape", {"x"}, {"shape"}, "shape");
  onnx::TensorProto index = int64_tensor({0});
  index.set_name("zero");
  *model.mutable_graph()->add_initializer() = index;
  add_int_attr(add_node(model, "Gather", {"shape", "zero"}, {"batch"}, "gather"), "axis", 0);
  add_ints_attr(add_node(model, "Constant", {}, {"minus1"}), "value_ints", {-1});
  add_int_attr(add_node(model, "Concat", {"batch", "minus1"}, {"target"}, "concat"), "axis", 0);
  add_node(model, "Reshape", {"x", "target"}, {"flat"}, "reshape");
  // An all-constant Add that no shape needs: folded only when fold_constants is on.
  add_float_initializer(model, "one", {1}, {1});
  add_node(model, "Add", {"one", "one"}, {"two"}, "add_consts");
  add_node(model, "Add", {"flat", "two"}, {"y"}, "add");
  add_output(model, "y", {2, 12});
  for (bool fold : {true, false}) {
    ImportOptions options;
    options.fold_constants = fold;
    Graph g = import(model, options);
    std::vector<std::string> ops;
    for (const Node& n : g.nodes()) ops.push_back(n.op);
    if (fold) {
      EXPECT_EQ(ops, (std::vector<std::string>{"Reshape", "Add"}));
    } else {
      EXPECT_EQ(ops, (std::vector<std::string>{"Reshape", "Add", "Add"}));
    }
    ValueId target = g.find_value("target");
    ASSERT_NE(target, kNoValue);
    EXPECT_EQ(g.value(target).constant.to_ints(), (std::vector<int64_t>{2, -1}));
    EXPECT_EQ(g.find_value("zero"), kNoValue) << "unused constants are dropped";
  }
}

TEST(OnnxImport, KnownInputsFeedingConstantSlotsAreBound) {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2, 3});
  add_input(model, "shape", {2}, onnx::TensorProto::INT64);
  add_node(model, "Reshape", {"x", "shape"}, {"y"}, "reshape");
  add_output(model, "y", {3, 2});
  try {
    import(model);
    FAIL() << "import succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'reshape' (op Reshape): input 1 ('shape') must be "
                                         "a constant"),
              std::string::npos)
        << e.what();
  }
  ImportOptions options;
  options.known_inputs["shape"] = Tensor::from_ints(DType::i64, {2}, std::vector<int64_t>{3, 2});
  // A known input that feeds no constant slot stays an input, even when its shape does.
  options.known_inputs["x"] = Tensor(DType::f32, {2, 3});
  add_node(model, "Shape", {"x"}, {"x_shape"}, "shape");
  add_node(model, "Reshape", {"x", "x_shape"}, {"same"}, "reshape_same");
  add_output(model, "same", {2, 3});
  Graph g = import(model, options);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_EQ(g.value(g.inputs()[0]).name, "x");
  EXPECT_EQ(g.value(g.outputs()[0]).type, (TensorType{DType::f32, {3, 2}}));
}

TEST(OnnxImport, DimNamesBindAcrossInputs) {
  onnx::ModelProto model = empty_model();
  add_input(model, "a", {std::string("N"), 4});
  add_input(model, "b", {std::string("N"), 4});
  add_node(model, "Add", {"a", "b"}, {"y"}, "add");
  add_output(model, "y", {std::string("N"), 4});
  ImportOptions options;
  options.shapes["a"] = {7, 4};
  Graph g = import(model, options);
  EXPECT_EQ(g.value(g.inputs()[1]).type, (TensorType{DType::f32, {7, 4}}));

  options.shapes["b"] = {8, 4};
  try {
    import(model, options);
    FAIL() << "import succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "dim 'N' is 7 in input 'a' but 8 in input 'b'");
  }
}

TEST(OnnxImport, InitializersListedAsInputsAreConstants) {
  onnx::ModelProto model = empty_model(6);
  model.set_ir_version(3);
  add_input(model, "x", {2});
  add_input(model, "w", {2});
  add_float_initializer(model, "w", {2}, {1, 2});
  add_node(model, "Mul", {"x", "w"}, {"y"}, "mul");
  add_output(model, "y", {2});
  Graph g = import(model);
  ASSERT_EQ(g.inputs().size(), 1u);
  EXPECT_TRUE(g.value(g.find_value("w")).is_constant());
}

TEST(OnnxImport, NodesOutOfOrderAreSorted) {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2});
  add_node(model, "Exp", {"r"}, {"y"}, "second");
  add_node(model, "Relu", {"x"}, {"r"}, "first");
  add_output(model, "y", {2});
  Graph g = import(model);
  ASSERT_EQ(g.num_nodes(), 2u);
  EXPECT_EQ(g.node(0).name, "first");
  EXPECT_EQ(g.node(1).name, "second");
}

TEST(OnnxImport, DeclaredInputs) {
  auto dir = temp_dir("declared");
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {std::string("N"), 3});
  add_input(model, "w", {3});
  add_float_initializer(model, "w", {3}, {1, 2, 3});
  add_input(model, "s", {2}, onnx::TensorProto::STRING);
  auto& x = *model.mutable_graph()->mutable_input(0);
  x.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim();
  std::string path = (dir / "model.onnx").string();
  std::ofstream(path, std::ios::binary) << model.SerializeAsString();
  std::vector<DeclaredInput> inputs = declared_inputs(path);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].name, "x");
  EXPECT_EQ(inputs[0].dtype, "f32");
  EXPECT_EQ(inputs[0].dims, (std::vector<std::string>{"N", "3", "?"}));
  EXPECT_EQ(inputs[1].dtype, "STRING");
}

TEST(OnnxExport, WritesOpset17WithInitializersAndKeepsNames) {
  Graph g = parse_graph(R"(graph main(%x: f32[2,4]) {
  const %w = f32[4]{1, 2, 3, 4}
  %y: f32[2,4] = Mul(%x, %w) @mul0
  %lo: f32[2,2], %hi: f32[2,2] = Split(%y) {axis = 1} @split0
  %r: f32[2,2] = Relu(%hi) @relu0
  return %lo, %r
}
)");
  std::string bytes = export_onnx_bytes(g);
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(bytes));
  EXPECT_EQ(model.ir_version(), 8);
  ASSERT_EQ(model.opset_import_size(), 1);
  EXPECT_EQ(model.opset_import(0).version(), 17);
  ASSERT_EQ(model.graph().initializer_size(), 1);
  EXPECT_EQ(model.graph().initializer(0).name(), "w");
  EXPECT_TRUE(model.graph().initializer(0).has_raw_data());
  ASSERT_EQ(model.graph().node_size(), 3);
  EXPECT_EQ(model.graph().node(1).name(), "split0");
  EXPECT_EQ(model.graph().node(1).attribute(0).name(), "axis");
  EXPECT_EQ(model.graph().value_info_size(), 2);  // y and hi
  Graph back = import_onnx_bytes(bytes, "");
  EXPECT_EQ(print_graph(back), print_graph(g));
  EXPECT_EQ(structural_hash(back), structural_hash(g));

  auto dir = temp_dir("export");
  std::string path = (dir / "out.onnx").string();
  export_onnx_file(g, path);
  EXPECT_EQ(structural_hash(import_onnx_file(path)), structural_hash(g));
  EXPECT_THROW(export_onnx_file(g, (dir / "missing" / "out.onnx").string()), Error);
}

}  // namespace
}  // namespace orch::frontend
