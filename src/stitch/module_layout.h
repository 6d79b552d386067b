// Private to src/stitch: a plan laid out as a module (kernels, where each value lives, weights),
// before it is written as the driver source, manifest and report.
#pragma once

#include <string>
#include <vector>

#include "codegen/choice.h"
#include "codegen/cuda/cuda_source.h"
#include "ir/graph.h"
#include "runtime/module_format.h"
#include "stitch/memory_plan.h"
#include "stitch/stitch.h"

namespace orch::stitch {

using runtime::KernelValue;
using runtime::Location;
using runtime::Region;
using runtime::region_name;

struct StitchedKernel {
  std::string name;     // "k3": symbols and file names
  std::string backend;  // "halide", "dnnl" or "reference"
  bool external = false;
  codegen::KernelChoice choice;
  std::vector<NodeId> primitives;
  Graph graph;                                // large constants are inputs (see `weights`)
  std::vector<KernelValue> inputs;            // external kernels: without `weights`
  std::vector<KernelValue> outputs;           // in kernel-graph output order
  std::vector<KernelValue> weights;           // external kernels: constant inputs bound at load
  std::vector<codegen::CudaLaunch> launches;  // CUDA kernels: in order, on one stream
  int64_t scratch_bytes = 0;                  // CUDA kernels: the scratch buffer they use
  /// Halide kernels: `graph` is over the block shapes of its tensors stored channel-blocked
  /// (block_shaped.h), compiled with the default schedule.
  bool block_shaped = false;
};

/// An arena buffer of the memory plan.
struct ArenaBuffer {
  std::string value;
  Location at;
  int producer = 0;
  int last_use = 0;
};

/// A constant stored in weights.bin.
struct WeightEntry {
  ValueId value = kNoValue;
  int64_t offset = 0;
};

struct ModuleLayout {
  std::string model;
  /// "cpu", or "cuda" with the architecture the cubin is built for (e.g. 90 for sm_90) and the
  /// GPU description it was planned for.
  std::string target = "cpu";
  int sm_arch = 0;
  std::string gpu;
  int64_t scratch_bytes = 0;  // the largest scratch of any CUDA kernel
  std::vector<KernelValue> inputs;
  std::vector<KernelValue> outputs;  // `at` is the output region unless copied (see copy_from)
  std::vector<bool> copied;          // output i is copied from outputs[i].at after the run
  std::vector<StitchedKernel> kernels;
  std::vector<ArenaBuffer> buffers;
  MemoryPlan memory;
  std::vector<WeightEntry> weights;
  int64_t weights_bytes = 0;
  double objective_us = 0;
  double lower_bound_us = 0;
  bool optimal = true;
  double operator_kernels_us = -1;   // one kernel per ONNX operator; negative: unknown
  double primitive_kernels_us = -1;  // one kernel per primitive (no fusion); negative: unknown
};

/// The C++ source of the driver: one function per kernel, called in plan order.
std::string driver_source(const ModuleLayout& layout);

/// manifest.json's text.
std::string manifest_json(const ModuleLayout& layout);

/// report.md's text.
std::string report_markdown(const ModuleLayout& layout, const StitchResult& result);

}  // namespace orch::stitch
