// Model statistics for `orch info`: op histogram, parameters, a FLOPs estimate.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace orch::driver {

struct ModelStats {
  std::map<std::string, int64_t> op_counts;
  int64_t parameters = 0;  // elements of all constants
  int64_t parameter_bytes = 0;
  /// Multiply-adds count as two; elementwise ops one per output element; layout ops zero.
  double flops = 0;
};

ModelStats model_stats(const Graph& graph);

}  // namespace orch::driver
