// `orch run MODEL`: runs a model with the reference interpreter and writes its outputs as .npy.
#include <fmt/format.h>

#include <filesystem>

#include "commands.h"
#include "driver/model_io.h"
#include "frontend/tensor_proto.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/npy.h"

namespace orch::tool {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs;
  std::vector<std::string> shapes;
  bool random_inputs = false;
  uint64_t seed = 0;
  std::string out;
  int print_values = 0;
};

// "[0.1, 0.2, ...]": the first `limit` elements.
std::string preview(const Tensor& t, int limit) {
  std::string s = "[";
  for (int64_t i = 0; i < std::min<int64_t>(t.numel(), limit); ++i)
    s += fmt::format("{}{:.6g}", i ? ", " : "", t.get(i));
  return s + (t.numel() > limit ? ", ...]" : "]");
}

Tensor read_input_file(const std::string& path) {
  if (path.ends_with(".npy")) return read_npy_file(path);
  if (path.ends_with(".pb")) return frontend::read_tensor_pb_file(path);
  fail("input file '{}': expected a .npy or .pb (ONNX TensorProto) file", path);
}

// A file name for an output value: ONNX names may hold '/' and other characters.
std::string file_name_for(const std::string& value_name) {
  std::string s;
  for (char c : value_name)
    s += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' ? c : '_';
  return s + ".npy";
}

void run_model(const RunArgs& args) {
  Graph graph = driver::load_model(args.model, import_options(args.shapes));
  std::map<std::string, Tensor> given;
  for (const std::string& text : args.inputs) {
    size_t eq = text.find('=');
    check(eq != std::string::npos, "bad --input '{}': expected NAME=FILE", text);
    std::string name = text.substr(0, eq);
    check(graph.find_value(name) != kNoValue,
          "--input names '{}', which is not an input of the model", name);
    try {
      given[name] = read_input_file(text.substr(eq + 1));
    } catch (const Error& e) {
      fail("input '{}': {}", name, e.what());
    }
  }
  std::vector<Tensor> random =
      args.random_inputs ? interp::random_inputs(graph, args.seed) : std::vector<Tensor>{};
  std::vector<Tensor> feed;
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const std::string& name = graph.value(graph.inputs()[i]).name;
    if (auto it = given.find(name); it != given.end())
      feed.push_back(it->second);
    else if (args.random_inputs)
      feed.push_back(random[i]);
    else
      fail("missing input '{}': pass --input {}=FILE or --random-inputs", name, name);
  }
  std::vector<Tensor> outputs = interp::interpret(graph, feed);
  std::filesystem::create_directories(args.out);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string& name = graph.value(graph.outputs()[i]).name;
    std::string path = (std::filesystem::path(args.out) / file_name_for(name)).string();
    write_npy_file(outputs[i], path);
    fmt::print("{}: {} -> {}\n", name, format_type({outputs[i].dtype(), outputs[i].shape()}), path);
    if (args.print_values > 0) fmt::print("  {}\n", preview(outputs[i], args.print_values));
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand(
      "run", "Run a model with the reference interpreter and write each output as OUT/NAME.npy");
  cmd->add_option("MODEL", args->model, "Model file (.onnx or .orch.txt)")->required();
  cmd->add_option(
      "--input", args->inputs,
      "An input value: NAME=FILE with a .npy or ONNX TensorProto .pb file (repeatable)");
  cmd->add_flag("--random-inputs", args->random_inputs,
                "Fill inputs not given with --input with random values (floats in [-1,1), "
                "integers in [0,10))");
  cmd->add_option("--seed", args->seed, "Seed for --random-inputs")->default_val(0);
  add_shape_option(*cmd, args->shapes);
  cmd->add_option("--out", args->out, "Folder for the output .npy files")->required();
  cmd->add_option("--print", args->print_values, "Also print the first N values of each output");
  cmd->callback([args] { run_model(*args); });
}

}  // namespace orch::tool
