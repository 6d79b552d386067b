#include "codegen/reference_backend.h"

#include "interp/interpreter.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

class ReferenceKernel final : public Kernel {
 public:
  explicit ReferenceKernel(const Graph& graph) : graph_(graph) {}

  void run(std::span<const Tensor> inputs, std::span<Tensor> outputs) override {
    std::vector<Tensor> results = interp::interpret(graph_, inputs);
    check(results.size() == outputs.size(), "reference kernel: {} outputs given, {} computed",
          outputs.size(), results.size());
    for (size_t i = 0; i < results.size(); ++i) {
      const TensorType got{results[i].dtype(), results[i].shape()};
      const TensorType want{outputs[i].dtype(), outputs[i].shape()};
      check(got == want, "reference kernel: output {} is {}, not {}", i, format_type(got),
            format_type(want));
      outputs[i] = std::move(results[i]);
    }
  }

 private:
  Graph graph_;
};

std::string accept_all(const Graph&) {
  return "";
}

std::unique_ptr<Kernel> compile_reference(const Graph& kernel) {
  return std::make_unique<ReferenceKernel>(kernel);
}

}  // namespace

const Backend& reference_backend() {
  static const Backend backend{"reference", accept_all, compile_reference};
  return backend;
}

}  // namespace orch::codegen
