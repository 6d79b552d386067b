// How a chosen candidate kernel is generated: the profiler records it with each measurement,
// the orchestrator's plan refers to candidates, and the stitcher generates each chosen kernel
// with the backend and configuration that were measured.
#pragma once

#include <string>

namespace orch::codegen {

struct KernelChoice {
  std::string backend;  // "halide", "dnnl" or "reference" (the interpreter's kernels)
  std::string config;   // the backend's configuration as text; "" for its default
  double cost_us = 0;   // the measured median latency
};

}  // namespace orch::codegen
