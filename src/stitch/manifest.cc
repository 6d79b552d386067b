// manifest.json and report.md of a module (fields documented in stitch/manifest.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "runtime/module_format.h"
#include "stitch/module_layout.h"

namespace orch::stitch {
namespace {

using nlohmann::json;

json location_json(const Location& at) {
  json j = {{"region", region_name(at.region)}, {"bytes", at.bytes}};
  if (at.region == Region::input || at.region == Region::output)
    j["index"] = at.index;
  else
    j["offset"] = at.offset;
  return j;
}

json value_json(const KernelValue& kv) {
  json j = location_json(kv.at);
  j["value"] = kv.value;
  j["dtype"] = dtype_name(kv.type.dtype);
  j["shape"] = kv.type.shape;
  if (kv.channel_block > 0) j["channel_block"] = kv.channel_block;
  return j;
}

json values_json(const std::vector<KernelValue>& values) {
  json j = json::array();
  for (const KernelValue& kv : values) j.push_back(value_json(kv));
  return j;
}

std::string primitive_label(NodeId id, const Node& node) {
  return node.name.empty() ? fmt::format("#{}", id) : node.name;
}

json kernel_json(const StitchedKernel& k) {
  json prims = json::array();
  // Kernel-graph nodes are the primitives in order (extract_kernel keeps their names).
  for (size_t i = 0; i < k.primitives.size() && i < k.graph.num_nodes(); ++i) {
    const Node& node = k.graph.node(static_cast<NodeId>(i));
    // The primitives of this kernel it reads (`orch explain` draws these edges).
    json inputs = json::array();
    for (ValueId v : node.inputs) {
      const NodeId producer = v == kNoValue ? kNoNode : k.graph.value(v).producer;
      if (producer != kNoNode) inputs.push_back(k.primitives[producer]);
    }
    prims.push_back({{"id", k.primitives[i]},
                     {"node", primitive_label(k.primitives[i], node)},
                     {"op", node.op},
                     {"inputs", inputs}});
  }
  json j = {{"name", k.name},
            {"backend", k.backend},
            {"external", k.external},
            {"config", k.choice.config},
            {"cost_us", k.choice.cost_us},
            {"optimized", k.backend != "reference"},
            {"primitives", prims},
            {"inputs", values_json(k.inputs)},
            {"outputs", values_json(k.outputs)}};
  if (!k.launches.empty()) {
    json launches = json::array();
    for (const codegen::CudaLaunch& l : k.launches) {
      if (const std::optional<codegen::GemmSpec>& g = l.gemm)
        launches.push_back({{"gemm",
                             {{"batch", g->batch},
                              {"m", g->m},
                              {"n", g->n},
                              {"k", g->k},
                              {"trans_a", g->trans_a},
                              {"trans_b", g->trans_b},
                              {"a", g->a},
                              {"b", g->b}}}});
      else if (const std::optional<codegen::ConvSpec>& c = l.conv)
        launches.push_back({{"conv",
                             {{"pads", c->pads},
                              {"strides", c->strides},
                              {"dilations", c->dilations},
                              {"group", c->group},
                              {"x", c->x},
                              {"w", c->w},
                              {"bias", c->bias},
                              {"relu", c->relu}}}});
      else
        launches.push_back({{"function", l.function},
                            {"blocks", l.blocks},
                            {"threads", l.threads},
                            {"shared_bytes", l.shared_bytes}});
    }
    j["launches"] = launches;
    j["scratch_bytes"] = k.scratch_bytes;
  }
  if (k.external) {
    j["graph"] = fmt::format("{}/{}.orch", runtime::kKernelGraphDir, k.name);
    json weights = json::array();
    for (const KernelValue& w : k.weights)
      weights.push_back({{"value", w.value}, {"offset", w.at.offset}, {"bytes", w.at.bytes}});
    j["weights"] = weights;
  }
  return j;
}

std::string human_bytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.2f} MiB", bytes / 1048576.0);
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{} B", bytes);
}

}  // namespace

std::string manifest_json(const ModuleLayout& layout) {
  json inputs = json::array(), outputs = json::array(), kernels = json::array(),
       buffers = json::array();
  for (const KernelValue& kv : layout.inputs)
    inputs.push_back(
        {{"name", kv.value}, {"dtype", dtype_name(kv.type.dtype)}, {"shape", kv.type.shape}});
  for (size_t i = 0; i < layout.outputs.size(); ++i) {
    const KernelValue& kv = layout.outputs[i];
    json o = {{"name", kv.value}, {"dtype", dtype_name(kv.type.dtype)}, {"shape", kv.type.shape}};
    if (layout.copied[i]) o["copy_from"] = location_json(kv.at);
    outputs.push_back(o);
  }
  for (const StitchedKernel& k : layout.kernels) kernels.push_back(kernel_json(k));
  for (const ArenaBuffer& b : layout.buffers)
    buffers.push_back({{"value", b.value},
                       {"region", "arena"},
                       {"offset", b.at.offset},
                       {"bytes", b.at.bytes},
                       {"producer", b.producer},
                       {"last_use", b.last_use}});
  bool cuda = layout.target == "cuda";
  json j = {{"format", cuda ? runtime::kCudaManifestFormat : runtime::kManifestFormat},
            {"version", runtime::kManifestVersion},
            {"model", layout.model},
            {"library", cuda ? runtime::kCubinFile : runtime::kLibraryFile},
            {"weights", runtime::kWeightsFile},
            {"weights_bytes", layout.weights_bytes},
            {"arena_bytes", layout.memory.arena_bytes},
            {"intermediate_bytes", layout.memory.total_bytes},
            {"objective_us", layout.objective_us},
            {"lower_bound_us", layout.lower_bound_us},
            {"solve_status", layout.optimal ? "optimal" : "time limit"},
            {"inputs", inputs},
            {"outputs", outputs},
            {"kernels", kernels},
            {"buffers", buffers}};
  if (cuda) {
    j["target"] = fmt::format("sm_{}", layout.sm_arch);
    j["gpu"] = layout.gpu;
    j["scratch_bytes"] = layout.scratch_bytes;
  }
  if (layout.operator_kernels_us >= 0) j["operator_kernels_us"] = layout.operator_kernels_us;
  if (layout.primitive_kernels_us >= 0) j["primitive_kernels_us"] = layout.primitive_kernels_us;
  return j.dump(2) + "\n";
}

namespace {

// The objective's part beyond the kernels' measured times: tuning's write cost (TuneOptions).
std::string write_cost_note(const ModuleLayout& layout) {
  double measured = 0;
  for (const StitchedKernel& k : layout.kernels) measured += k.choice.cost_us;
  double written = layout.objective_us - measured;
  if (written < 0.05) return "";
  return fmt::format(
      ": the kernels' measured times, {:.1f} us, plus {:.1f} us for writing their outputs at "
      "main-memory bandwidth",
      measured, written);
}

}  // namespace

std::string report_markdown(const ModuleLayout& layout, const StitchResult& result) {
  std::string text = fmt::format("# orch module: {}\n\n", layout.model);
  if (layout.target == "cuda")
    text += fmt::format(
        "{} CUDA kernels ({} of them cuBLAS GEMMs, {} cuDNN convolutions, {} run on the host "
        "between copies; {} launches) for sm_{} ({}), compiled only: costs are analytic "
        "estimates, nothing was measured. Plan objective {:.1f} us ({}).\n\n",
        layout.kernels.size(), result.cublas_kernels, result.cudnn_kernels,
        result.reference_kernels, result.cuda_launches, layout.sm_arch, layout.gpu,
        layout.objective_us, layout.optimal ? "optimal" : "time limit, not proven optimal");
  else
    text += fmt::format(
        "{} kernels ({} Halide, {} oneDNN, {} reference). Plan objective {:.1f} us ({}){}.\n\n",
        layout.kernels.size(), result.halide_kernels, result.dnnl_kernels, result.reference_kernels,
        layout.objective_us, layout.optimal ? "optimal" : "time limit, not proven optimal",
        write_cost_note(layout));
  if (layout.operator_kernels_us >= 0)
    text += fmt::format(
        "One kernel per operator: {:.1f} us; this plan: {:.1f} us ({:.2f}x).\n\n",
        layout.operator_kernels_us, layout.objective_us,
        layout.objective_us > 0 ? layout.operator_kernels_us / layout.objective_us : 0.0);
  if (layout.primitive_kernels_us >= 0)
    text += fmt::format(
        "One kernel per primitive (no fusion, the same costs): {:.1f} us; this plan: {:.1f} us "
        "({:.2f}x).\n\n",
        layout.primitive_kernels_us, layout.objective_us,
        layout.objective_us > 0 ? layout.primitive_kernels_us / layout.objective_us : 0.0);
  text += fmt::format(
      "Memory: peak arena {} versus {} for all intermediates without reuse; weights {}; {} "
      "intermediates stored channel-blocked between kernels.\n\n",
      human_bytes(layout.memory.arena_bytes), human_bytes(layout.memory.total_bytes),
      human_bytes(layout.weights_bytes), result.blocked_tensors);
  text += fmt::format("| kernel | backend | primitives | {} us | note |\n|---|---|---|---:|---|\n",
                      layout.target == "cuda" ? "estimated" : "measured");
  for (const StitchedKernel& k : layout.kernels) {
    std::vector<std::string> ops;
    for (const Node& n : k.graph.nodes()) ops.push_back(n.op);
    text += fmt::format("| {} | {} | {} | {:.1f} | {} |\n", k.name, k.backend, fmt::join(ops, ", "),
                        k.choice.cost_us,
                        k.backend != "reference"  ? ""
                        : layout.target == "cuda" ? "on the host, between copies"
                                                  : "not optimized");
  }
  text += "\nThe plan as a picture: plan.svg (plan.dot; `orch explain DIR` redraws it).\n";
  if (!result.notes.empty()) {
    text += "\nNotes:\n\n";
    for (const std::string& note : result.notes) text += "- " + note + "\n";
  }
  return text;
}

}  // namespace orch::stitch
