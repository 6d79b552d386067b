#include "kernel_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

namespace orch::tool {
namespace {

using driver::median_of;

std::string planned_cell(double us) {
  return us < 0 ? "-" : fmt::format("{:.1f}", us);
}

std::string ratio(double us, double planned_us) {
  return planned_us > 0 ? fmt::format("{:.2f}", us / planned_us) : "-";
}

// The primitives of a kernel, shortened for a table cell.
std::string cell(const std::string& primitives) {
  constexpr size_t kWidth = 60;
  return primitives.size() <= kWidth ? primitives : primitives.substr(0, kWidth - 3) + "...";
}

// Prints the `top` slowest kernels (`us[k]`: kernel k's times over the runs) against the plan's
// costs, named `planned` ("tuned": measured alone; "estimated": analytic), then the totals per
// backend and the median of the whole runs.
void print_profile(const std::vector<KernelSpec>& kernels,
                   const std::vector<std::vector<double>>& us, const std::vector<double>& run_us,
                   int top, const std::string& planned) {
  std::vector<double> med(kernels.size());
  for (size_t k = 0; k < kernels.size(); ++k) med[k] = us[k].empty() ? 0 : median_of(us[k]);
  std::vector<size_t> order(kernels.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return med[a] > med[b]; });

  fmt::print(
      "\n| kernel | backend | primitives | us | {0} us | us / {0} |\n"
      "|---|---|---|---:|---:|---:|\n",
      planned);
  for (size_t i = 0; i < order.size() && static_cast<int>(i) < top; ++i) {
    const KernelSpec& k = kernels[order[i]];
    fmt::print("| {} | {} | {} | {:.1f} | {} | {} |\n", k.name, k.backend, cell(k.primitives),
               med[order[i]], planned_cell(k.planned_us), ratio(med[order[i]], k.planned_us));
  }
  struct Total {
    int kernels = 0;
    double us = 0, planned_us = 0;
  };
  std::map<std::string, Total> totals;
  for (size_t k = 0; k < kernels.size(); ++k) {
    Total& t = totals[kernels[k].backend];
    ++t.kernels;
    t.us += med[k];
    t.planned_us += std::max(0.0, kernels[k].planned_us);
  }
  fmt::print("\n| backend | kernels | us | {0} us | us / {0} |\n|---|---:|---:|---:|---:|\n",
             planned);
  Total all;
  for (const auto& [backend, t] : totals) {
    fmt::print("| {} | {} | {:.1f} | {:.1f} | {} |\n", backend, t.kernels, t.us, t.planned_us,
               ratio(t.us, t.planned_us));
    all.kernels += t.kernels;
    all.us += t.us;
    all.planned_us += t.planned_us;
  }
  fmt::print("| all | {} | {:.1f} | {:.1f} | {} |\n\nwhole runs: median {:.1f} us\n", all.kernels,
             all.us, all.planned_us, ratio(all.us, all.planned_us), median_of(run_us));
}

}  // namespace

void print_kernel_profile(const Module& module, Context& context, const std::vector<Tensor>& feed,
                          int repeat, int top) {
  driver::KernelTimes times = driver::time_kernels(module, context, feed, repeat);
  fmt::print(
      "kernel profile: median of {} runs; 'tuned us' is the kernel's time when it was tuned "
      "alone\n",
      repeat);
  print_profile(module.kernels(), times.kernel_us, times.run_us, top, "tuned");
}

void print_cuda_kernel_profile(runtime::CudaModule& module, int repeat, int top) {
  const std::vector<KernelSpec>& kernels = module.kernels();
  std::vector<std::vector<double>> us(kernels.size());
  std::vector<double> run_us;
  for (const std::vector<double>& run : module.kernel_ms(repeat)) {
    double total = 0;
    for (size_t k = 0; k < run.size(); ++k) {
      us[k].push_back(run[k] * 1e3);
      total += run[k] * 1e3;
    }
    run_us.push_back(total);
  }
  fmt::print(
      "kernel profile: median of {} runs, CUDA events between kernels; 'estimated us' is the "
      "analytic cost the plan was made with\n",
      repeat);
  print_profile(kernels, us, run_us, top, "estimated");
}

}  // namespace orch::tool
