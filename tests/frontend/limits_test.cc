// Hostile models: absurd or overflowing sizes, data that the file cannot hold, huge attribute
// lists and deep nesting fail with an Error naming the tensor or node, before allocating.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "onnx_model_builder.h"

namespace orch::frontend {
namespace {

using namespace testing;

std::string import_error(const onnx::ModelProto& model) {
  try {
    import_onnx_bytes(model.SerializeAsString(), "/nonexistent-orch-limits");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "import succeeded";
  return "";
}

// x: f32[2,3] + w -> y, with `w` left for the test to fill in.
onnx::ModelProto add_model(onnx::TensorProto** w) {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2, 3});
  *w = model.mutable_graph()->add_initializer();
  (*w)->set_name("w");
  (*w)->set_data_type(onnx::TensorProto::FLOAT);
  add_node(model, "Add", {"x", "w"}, {"y"}, "add");
  add_output(model, "y", {2, 3});
  return model;
}

TEST(ImportLimits, AbsurdInitializerShapeFailsBeforeAllocating) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = add_model(&w);
  w->add_dims(1000000);
  w->add_dims(1000000);
  w->set_raw_data(std::string(4, '\0'));
  EXPECT_EQ(import_error(model),
            "tensor 'w': raw_data has 4 bytes, f32 [1000000,1000000] needs 4000000000000");
}

TEST(ImportLimits, InitializerValuesExceedingTheFileFail) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = add_model(&w);
  w->add_dims(1000000000000);
  w->add_float_data(1.0f);
  EXPECT_EQ(import_error(model), "tensor 'w': 1 values for shape [1000000000000]");
}

TEST(ImportLimits, NegativeDimFails) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = add_model(&w);
  w->add_dims(-1);
  w->add_dims(3);
  EXPECT_EQ(import_error(model), "tensor 'w': negative dim in [-1,3]");
}

TEST(ImportLimits, OverflowingDimsFail) {
  onnx::TensorProto* w = nullptr;
  onnx::ModelProto model = add_model(&w);
  for (int i = 0; i < 3; ++i) w->add_dims(int64_t{1} << 31);
  EXPECT_EQ(import_error(model),
            "tensor 'w': shape [2147483648,2147483648,2147483648] has too many elements");
}

TEST(ImportLimits, OverflowingInputDimsFail) {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {int64_t{1} << 40, int64_t{1} << 40});
  add_node(model, "Relu", {"x"}, {"y"}, "relu");
  add_output(model, "y", {int64_t{1} << 40, int64_t{1} << 40});
  std::string message = import_error(model);
  EXPECT_NE(message.find("input 'x'"), std::string::npos) << message;
  EXPECT_NE(message.find("has too many elements"), std::string::npos) << message;
}

TEST(ImportLimits, HugeAttributeListNamesTheNode) {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2, 3});
  std::vector<int64_t> perm(1000000);
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  add_ints_attr(add_node(model, "Transpose", {"x"}, {"y"}, "t"), "perm", perm);
  add_output(model, "y", {3, 2});
  std::string message = import_error(model);
  EXPECT_EQ(message.rfind("node 't' (op Transpose): ", 0), 0u) << message;
}

TEST(ImportLimits, AttributeListLongerThanTheFileFails) {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2, 3});
  add_ints_attr(add_node(model, "Transpose", {"x"}, {"y"}, "t"), "perm",
                std::vector<int64_t>(64, 1));
  add_output(model, "y", {3, 2});
  std::string bytes = model.SerializeAsString();
  // Cut inside the list (field 8, value 1, repeated): the declared lengths of the node and the
  // graph now run past the end of the file.
  size_t cut = bytes.find("\x40\x01\x40\x01\x40\x01\x40\x01");
  ASSERT_NE(cut, std::string::npos);
  try {
    import_onnx_bytes(bytes.substr(0, cut + 4), "/nonexistent-orch-limits");
    FAIL() << "import succeeded";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "not an ONNX model (the protobuf does not parse: truncated or another format)");
  }
}

TEST(ImportLimits, DeepNestingFails) {
  onnx::ModelProto model = empty_model();
  add_input(model, "c", {}, onnx::TensorProto::BOOL);
  add_output(model, "y", {});
  onnx::GraphProto* graph = model.mutable_graph();
  // 1000 If nodes, each the then_branch of the one outside it: past protobuf's depth limit.
  for (int depth = 0; depth < 1000; ++depth) {
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type("If");
    node->add_input("c");
    node->add_output("y");
    auto* attr = node->add_attribute();
    attr->set_name("then_branch");
    attr->set_type(onnx::AttributeProto::GRAPH);
    graph = attr->mutable_g();
  }
  // protobuf's parser stops at 100 levels of nesting.
  EXPECT_EQ(import_error(model),
            "not an ONNX model (the protobuf does not parse: truncated or another format)");
}

// ConstantOfShape(shape) with `shape` an initializer of the given values.
onnx::ModelProto constant_of_shape_model(const std::vector<int64_t>& dims, int elem) {
  onnx::ModelProto model = empty_model();
  onnx::TensorProto& shape = *model.mutable_graph()->add_initializer();
  shape.set_name("shape");
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(static_cast<int64_t>(dims.size()));
  for (int64_t d : dims) shape.add_int64_data(d);
  auto& node = add_node(model, "ConstantOfShape", {"shape"}, {"big"}, "cos");
  auto* value = node.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(elem);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->set_raw_data(std::string(elem == onnx::TensorProto::INT64 ? 8 : 4, '\0'));
  return model;
}

TEST(ImportLimits, AbsurdFoldedResultStaysANode) {
  onnx::ModelProto model = constant_of_shape_model({1000000, 1000000}, onnx::TensorProto::FLOAT);
  add_output(model, "big", {1000000, 1000000});
  Graph graph = import_onnx_bytes(model.SerializeAsString(), "/nonexistent-orch-limits");
  ASSERT_EQ(graph.num_nodes(), 1u);
  EXPECT_EQ(graph.node(0).op, "ConstantOfShape");
}

TEST(ImportLimits, AbsurdShapeValueNamesTheNode) {
  onnx::ModelProto model = constant_of_shape_model({100000, 100000}, onnx::TensorProto::INT64);
  add_input(model, "x", {2, 3});
  add_node(model, "Reshape", {"x", "big"}, {"y"}, "reshape");
  add_output(model, "y", {6});
  EXPECT_EQ(import_error(model),
            "node 'cos' (op ConstantOfShape): computes a shape value of type i64[100000,100000], "
            "over the 1024 MiB limit");
}

// Inputs found by fuzz/onnx_import_fuzz.cc (tests/data/fuzz_regressions/onnx_import/), with the
// error each must now give.
std::string regression_error(const std::string& name) {
  std::ifstream in(std::string(ORCH_TEST_DATA) + "/fuzz_regressions/onnx_import/" + name,
                   std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  try {
    import_onnx_bytes(bytes.str(), "/nonexistent-orch-limits");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << name << ": import succeeded";
  return "";
}

// A PRelu with its slope missing, in an IR-version-3 model with no opset import: the pre-opset-7
// slope rule read input 1 past the end of the node's inputs (heap-buffer-overflow).
TEST(ImportFuzzRegression, PreluWithoutSlope) {
  EXPECT_EQ(regression_error("prelu_without_slope.onnx"),
            "node '0' (op PRelu) at opset 6: PRelu needs input 1");
}

// Slice and Split of a rank-0 input along axis 0: normalize_axis accepted axis 0 for rank 0, and
// the shape rules read the shape's dim 0 (null reference).
TEST(ImportFuzzRegression, SliceOfAScalar) {
  EXPECT_EQ(regression_error("slice_of_scalar.onnx"),
            "node producing '1' (op Slice): axis 0 is out of range for rank 0");
}

TEST(ImportFuzzRegression, SplitOfAScalar) {
  EXPECT_EQ(regression_error("split_of_scalar.onnx"),
            "node producing '1' (op Split): axis 0 is out of range for rank 0");
}

// The other opset-upgrade rules that read an input before the schema checks the arity.
TEST(ImportFuzzRegression, LegacyRulesNeedTheirInputs) {
  for (const char* op : {"Clip", "Softmax", "PRelu"}) {
    onnx::ModelProto model = empty_model(6);
    add_input(model, "x", {2, 3});
    add_node(model, op, {}, {"y"}, "n");
    add_output(model, "y", {2, 3});
    EXPECT_EQ(import_error(model),
              fmt::format("node 'n' (op {0}) at opset 6: {0} needs input 0", op))
        << op;
  }
}

}  // namespace
}  // namespace orch::frontend
