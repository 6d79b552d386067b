#include "driver/unique_kernel.h"

#include <fmt/format.h>

namespace orch::driver {

std::string output_types(const Graph& kernel) {
  std::string out;
  for (ValueId v : kernel.outputs())
    out += fmt::format("{}{}", out.empty() ? "" : ";", format_type(kernel.value(v).type));
  return out;
}

std::pair<std::vector<NodeId>, std::vector<ValueId>> kernel_parts(const Graph& graph,
                                                                  const Candidate& c) {
  std::vector<NodeId> members(c.primitives.begin(), c.primitives.end());
  std::vector<ValueId> outputs;
  for (int p : c.outputs)
    for (ValueId v : graph.node(p).outputs) outputs.push_back(v);
  return {std::move(members), std::move(outputs)};
}

void apply_records(UniqueKernel& u, const std::vector<profile::TuningRecord>& records) {
  u.known = true;
  for (const profile::TuningRecord& r : records) {
    double us = r.recheck_us > 0 ? r.recheck_us : r.median_us;
    if (r.ok && us < u.cost_us) {
      u.cost_us = us;
      u.choice = {.backend = r.backend, .config = r.config, .cost_us = us};
      u.rechecked = r.recheck_us > 0;
    }
  }
}

std::string measurement_key(const TuneOptions& options) {
  std::string key = profile::machine_fingerprint();
  if (options.threads > 0) key += fmt::format(" threads={}", options.threads);
  if (options.flush_cache) key += " cold";
  return key;
}

}  // namespace orch::driver
