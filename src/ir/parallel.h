#pragma once

// Independent work spread over the machine's cores.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace orch {

/// Calls work(i) for every i in [0, count), on every core; each i once, in no set order. The
/// first exception a call throws is rethrown here once all calls have ended.
template <typename Work>
void parallel_for(size_t count, const Work& work) {
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto run = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        work(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
    }
  };
  size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, count + 1);
  std::vector<std::thread> helpers;
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(run);
  run();
  for (std::thread& t : helpers) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace orch
