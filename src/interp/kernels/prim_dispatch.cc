// Kernels of the `prim.*` primitives: each runs the reference kernel of its ONNX form
// (ir/ops/prim.h), so a primitive computes exactly what the equivalent ONNX op computes.
#include "interp/interpreter.h"
#include "interp/kernels/families.h"
#include "ir/ops/prim.h"

namespace orch::interp {
namespace {

void run_primitive(KernelArgs& args) {
  std::vector<TensorType> types;
  for (const Tensor& t : args.inputs) types.push_back({t.dtype(), t.shape()});
  prim::OnnxForm form = prim::onnx_form(args.op, args.attrs, types);
  std::vector<Tensor> inputs;
  for (prim::OnnxArg& arg : form.args)
    inputs.push_back(arg.input >= 0 ? args.inputs[arg.input] : arg.constant);
  std::vector<TensorType> outputs = {{args.outputs[0].dtype(), args.outputs[0].shape()}};
  args.outputs[0] = run_op(form.op, form.attrs, std::move(inputs), outputs)[0];
}

}  // namespace

void add_primitive_kernels(KernelTable& table) {
  for (const OpSchema& schema : all_ops())
    if (prim::is_primitive(schema.name)) table.emplace_back(schema.name, run_primitive);
}

}  // namespace orch::interp
