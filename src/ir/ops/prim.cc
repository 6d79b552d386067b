// The primitive registry: schemas from the prim_*.cc files, and the lookup of ONNX forms.
#include "ir/ops/prim.h"

#include "ir/error.h"
#include "ir/ops/families.h"
#include "ir/ops/prim_parts.h"

namespace orch::prim {
namespace {

struct Registry {
  std::vector<OpSchema> schemas;
  FormTable forms;
};

const Registry& registry() {
  static const Registry kRegistry = [] {
    Registry r;
    add_elementwise_prims(r.schemas, r.forms);
    add_layout_prims(r.schemas, r.forms);
    add_linear_prims(r.schemas, r.forms);
    return r;
  }();
  return kRegistry;
}

}  // namespace

OnnxForm onnx_form(std::string_view op, const Attributes& attrs,
                   std::span<const TensorType> inputs) {
  for (const auto& [name, form] : registry().forms)
    if (name == op) return form(attrs, inputs);
  fail("'{}' is not a primitive", op);
}

bool is_primitive(std::string_view op) {
  return op.starts_with("prim.");
}

std::vector<TensorType> infer_form(const OnnxForm& form, const InferInput& in) {
  const OpSchema* schema = find_op(form.op);
  check(schema != nullptr && schema->infer != nullptr, "no shape rule for '{}'", form.op);
  InferInput onnx{form.attrs, {}, {}, 1};
  for (const OnnxArg& arg : form.args) {
    if (arg.input < 0 && !arg.constant.defined()) {
      onnx.types.push_back(std::nullopt);
      onnx.values.push_back(nullptr);
    } else if (arg.input >= 0) {
      onnx.types.push_back(in.type(arg.input));
      onnx.values.push_back(in.has(arg.input) ? in.values[arg.input] : nullptr);
    } else {
      onnx.types.push_back(TensorType{arg.constant.dtype(), arg.constant.shape()});
      onnx.values.push_back(&arg.constant);
    }
  }
  return schema->infer(onnx);
}

Tensor int_tensor(const std::vector<int64_t>& values) {
  return Tensor::from_ints(DType::i64, {static_cast<int64_t>(values.size())}, values);
}

std::vector<int64_t> required_ints(const Attributes& attrs, std::string_view name) {
  check(has_attr(attrs, name), "attribute '{}' is required", name);
  return attr_ints(attrs, name);
}

}  // namespace orch::prim

namespace orch::ops {

void add_primitive_ops(std::vector<OpSchema>& table) {
  const auto& schemas = prim::registry().schemas;
  table.insert(table.end(), schemas.begin(), schemas.end());
}

}  // namespace orch::ops
