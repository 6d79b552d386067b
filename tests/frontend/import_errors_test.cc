// Bad models: each import fails with a one-line Error that names the file, node or value.
#include <gtest/gtest.h>

#include <fstream>

#include "frontend/onnx_import.h"
#include "ir/error.h"
#include "onnx_model_builder.h"

namespace orch::frontend {
namespace {

using namespace testing;

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The Error that importing `model` (written to `dir`/model.onnx) throws.
Error import_failure(const onnx::ModelProto& model, const std::filesystem::path& dir,
                     const ImportOptions& options = {}) {
  std::string path = (dir / "model.onnx").string();
  write_file(path, model.SerializeAsString());
  try {
    import_onnx_file(path, options);
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind(path, 0), 0u) << "the message should start with the file: " << message;
    return e;
  }
  ADD_FAILURE() << "import succeeded";
  return Error("");
}

std::string import_error(const onnx::ModelProto& model, const std::filesystem::path& dir,
                         const ImportOptions& options = {}) {
  return import_failure(model, dir, options).what();
}

// x: f32[2,3] -> Relu -> y.
onnx::ModelProto relu_model() {
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2, 3});
  add_node(model, "Relu", {"x"}, {"y"}, "relu");
  add_output(model, "y", {2, 3});
  return model;
}

TEST(ImportErrors, TruncatedFile) {
  auto dir = temp_dir("truncated");
  onnx::ModelProto model = relu_model();
  add_float_initializer(model, "unused", {64}, std::vector<float>(64, 1.0f));
  std::string bytes = model.SerializeAsString();
  std::string path = (dir / "model.onnx").string();
  write_file(path, bytes.substr(0, bytes.size() - 100));
  try {
    import_onnx_file(path);
    FAIL() << "import succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": not an ONNX model (the protobuf does not parse: truncated or another "
                  "format)");
  }
}

TEST(ImportErrors, TextFileIsNotOnnx) {
  auto dir = temp_dir("text");
  std::string path = (dir / "model.onnx").string();
  write_file(path, "graph main(%x: f32[2]) {\n  return %x\n}\n");
  try {
    import_onnx_file(path);
    FAIL() << "import succeeded";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(message.rfind(path + ": not an ONNX model", 0), 0u) << message;
  }
}

TEST(ImportErrors, MissingFile) {
  try {
    import_onnx_file("/nonexistent/model.onnx");
    FAIL() << "import succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "/nonexistent/model.onnx: cannot open file");
  }
}

TEST(ImportErrors, MissingExternalDataFile) {
  auto dir = temp_dir("external_missing");
  onnx::ModelProto model = relu_model();
  onnx::TensorProto& w = *model.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(3);
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = w.add_external_data();
  location->set_key("location");
  location->set_value("weights.bin");
  add_node(model, "Add", {"y", "w"}, {"z"}, "add");
  add_output(model, "z", {2, 3});
  std::string message = import_error(model, dir);
  EXPECT_NE(message.find("tensor 'w': external data file '" + (dir / "weights.bin").string() +
                         "' cannot be opened"),
            std::string::npos)
      << message;
}

TEST(ImportErrors, ExternalDataOutOfRange) {
  auto dir = temp_dir("external_range");
  write_file((dir / "weights.bin").string(), std::string(8, '\0'));
  onnx::ModelProto model = relu_model();
  onnx::TensorProto& w = *model.mutable_graph()->add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  w.add_dims(3);
  w.set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair{"location", "weights.bin"}, {"offset", "4"}}) {
    auto* entry = w.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  add_node(model, "Add", {"y", "w"}, {"z"}, "add");
  add_output(model, "z", {2, 3});
  std::string message = import_error(model, dir);
  EXPECT_NE(message.find("tensor 'w': external data needs bytes [4, 16) but '" +
                         (dir / "weights.bin").string() + "' has 8 bytes"),
            std::string::npos)
      << message;
}

TEST(ImportErrors, UnknownOp) {
  auto dir = temp_dir("unknown_op");
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2});
  add_node(model, "FooBar", {"x"}, {"y"}, "foo");
  add_output(model, "y", {2});
  std::string message = import_error(model, dir);
  EXPECT_NE(message.find(": node 'foo' (op FooBar): unsupported op 'FooBar'"), std::string::npos)
      << message;
}

// Unsupported features are told apart from broken models (conformance skips the former).
TEST(ImportErrors, KindsSeparateUnsupportedFromInvalid) {
  auto dir = temp_dir("kinds");
  onnx::ModelProto unknown = empty_model();
  add_input(unknown, "x", {2});
  add_node(unknown, "FooBar", {"x"}, {"y"}, "foo");
  add_output(unknown, "y", {2});
  EXPECT_EQ(import_failure(unknown, dir).kind(), Error::Kind::unsupported);
  onnx::ModelProto broken = unknown;
  broken.mutable_graph()->mutable_node(0)->set_op_type("Relu");
  broken.mutable_graph()->mutable_node(0)->set_input(0, "ghost");
  EXPECT_EQ(import_failure(broken, dir).kind(), Error::Kind::invalid);
}

TEST(ImportErrors, NonDefaultDomain) {
  auto dir = temp_dir("domain");
  onnx::ModelProto model = relu_model();
  model.mutable_graph()->mutable_node(0)->set_domain("com.example");
  std::string message = import_error(model, dir);
  EXPECT_NE(message.find("node 'relu' (op Relu): domain 'com.example' is not supported"),
            std::string::npos)
      << message;
}

TEST(ImportErrors, Cycle) {
  auto dir = temp_dir("cycle");
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2});
  add_node(model, "Add", {"x", "c"}, {"b"}, "add");
  add_node(model, "Relu", {"b"}, {"c"}, "relu");
  add_node(model, "Relu", {"b"}, {"y"}, "out");
  add_output(model, "y", {2});
  std::string message = import_error(model, dir);
  EXPECT_TRUE(message.ends_with(": the graph has a cycle through node 'add' (op Add)") ||
              message.ends_with(": the graph has a cycle through node 'relu' (op Relu)"))
      << message;
}

TEST(ImportErrors, ShapeMismatch) {
  auto dir = temp_dir("shape_mismatch");
  onnx::ModelProto model = empty_model();
  add_input(model, "a", {2, 3});
  add_input(model, "b", {4});
  add_node(model, "Add", {"a", "b"}, {"y"}, "add");
  add_output(model, "y", {2, 3});
  std::string message = import_error(model, dir);
  EXPECT_NE(message.find(": node 'add' (op Add): "), std::string::npos) << message;
  EXPECT_NE(message.find("[2,3]"), std::string::npos) << message;
  EXPECT_NE(message.find("[4]"), std::string::npos) << message;
}

TEST(ImportErrors, DeclaredOutputTypeMismatch) {
  auto dir = temp_dir("output_type");
  onnx::ModelProto model = relu_model();
  model.mutable_graph()->clear_output();
  add_output(model, "y", {2, 4});
  std::string message = import_error(model, dir);
  EXPECT_TRUE(message.ends_with(": output 'y' is declared FLOAT[2,4] but orch infers f32[2,3]"))
      << message;
}

TEST(ImportErrors, DuplicateValueName) {
  auto dir = temp_dir("duplicate");
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2});
  add_node(model, "Relu", {"x"}, {"y"}, "first");
  add_node(model, "Exp", {"x"}, {"y"}, "second");
  add_output(model, "y", {2});
  std::string message = import_error(model, dir);
  EXPECT_TRUE(
      message.ends_with(": duplicate value name 'y': node 'first' (op Relu) and node "
                        "'second' (op Exp) both produce it"))
      << message;
}

TEST(ImportErrors, NodeOutputShadowsInput) {
  auto dir = temp_dir("shadow");
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {2});
  add_node(model, "Relu", {"x"}, {"x"}, "relu");
  add_output(model, "x", {2});
  std::string message = import_error(model, dir);
  EXPECT_NE(message.find("duplicate value name 'x'"), std::string::npos) << message;
}

TEST(ImportErrors, UnboundSymbolicDim) {
  auto dir = temp_dir("unbound");
  onnx::ModelProto model = empty_model();
  add_input(model, "x", {std::string("N"), 3});
  add_node(model, "Relu", {"x"}, {"y"}, "relu");
  add_output(model, "y", {std::string("N"), 3});
  std::string message = import_error(model, dir);
  EXPECT_TRUE(message.ends_with(": input 'x' has unbound dim 'N'; pass --shape x=...")) << message;

  ImportOptions options;
  options.shapes["x"] = {5, 3};
  Graph g = import_onnx_file((dir / "model.onnx").string(), options);
  EXPECT_EQ(g.value(g.outputs()[0]).type, (TensorType{DType::f32, {5, 3}}));
}

TEST(ImportErrors, ShapeBindingConflictsWithFixedDim) {
  auto dir = temp_dir("fixed_dim");
  ImportOptions options;
  options.shapes["x"] = {2, 4};
  std::string message = import_error(relu_model(), dir, options);
  EXPECT_TRUE(message.ends_with(": input 'x' fixes dim 1 at 3, but [2,4] is given")) << message;
}

TEST(ImportErrors, ShapeForUnknownInput) {
  auto dir = temp_dir("unknown_input");
  ImportOptions options;
  options.shapes["nope"] = {1};
  std::string message = import_error(relu_model(), dir, options);
  EXPECT_TRUE(message.ends_with(": --shape names 'nope', which is not an input of the model"))
      << message;
}

TEST(ImportErrors, UndefinedInput) {
  auto dir = temp_dir("undefined");
  onnx::ModelProto model = relu_model();
  add_node(model, "Add", {"y", "ghost"}, {"z"}, "add");
  add_output(model, "z", {2, 3});
  std::string message = import_error(model, dir);
  EXPECT_TRUE(message.ends_with(": node 'add' (op Add): input 'ghost' is not defined")) << message;
}

TEST(ImportErrors, UnsupportedInputDtype) {
  auto dir = temp_dir("string_input");
  onnx::ModelProto model = empty_model();
  add_input(model, "s", {2}, onnx::TensorProto::STRING);
  add_node(model, "Identity", {"s"}, {"y"}, "id");
  add_output(model, "y", {2}, onnx::TensorProto::STRING);
  std::string message = import_error(model, dir);
  EXPECT_TRUE(message.ends_with(": input 's' has data type STRING, which orch does not support"))
      << message;
}

TEST(ImportErrors, NewerOpset) {
  auto dir = temp_dir("opset");
  onnx::ModelProto model = relu_model();
  model.mutable_opset_import(0)->set_version(18);
  std::string message = import_error(model, dir);
  EXPECT_TRUE(message.ends_with(": opset 18 is not supported (orch reads opsets 1 to 17)"))
      << message;
}

TEST(ImportErrors, UnnormalizableOldForm) {
  auto dir = temp_dir("bn_spatial");
  onnx::ModelProto model = empty_model(6);
  add_input(model, "x", {1, 2, 3});
  for (const char* name : {"scale", "bias", "mean", "var"})
    add_float_initializer(model, name, {2}, {1, 1});
  auto& node =
      add_node(model, "BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"}, "bn");
  add_int_attr(node, "spatial", 0);
  add_output(model, "y", {1, 2, 3});
  std::string message = import_error(model, dir);
  EXPECT_TRUE(message.ends_with(
      ": node 'bn' (op BatchNormalization) at opset 6: spatial=0 is not supported"))
      << message;
}

}  // namespace
}  // namespace orch::frontend
