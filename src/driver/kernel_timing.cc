#include "driver/kernel_timing.h"

#include <algorithm>
#include <chrono>

namespace orch::driver {
namespace {

using Clock = std::chrono::steady_clock;

double us_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

}  // namespace

KernelTimes time_kernels(const Module& module, Context& context, const std::vector<Tensor>& feed,
                         int repeat, double budget_s) {
  KernelTimes times;
  times.kernel_us.resize(module.kernels().size());
  module.run(context, feed);  // warm-up
  const Clock::time_point first = Clock::now();
  for (int r = 0; r < std::max(repeat, 1); ++r) {
    if (r > 0 && budget_s > 0 && us_between(first, Clock::now()) > budget_s * 1e6) break;
    Clock::time_point start = Clock::now(), last = start;
    module.run(
        context, feed,
        [&](int k, std::span<const Tensor>) {
          Clock::time_point now = Clock::now();
          times.kernel_us[static_cast<size_t>(k)].push_back(us_between(last, now));
          last = now;
        },
        HookOutputs::none);
    times.run_us.push_back(us_between(start, Clock::now()));
  }
  return times;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace orch::driver
