#include "stitch/memory_plan.h"

#include <algorithm>
#include <numeric>

#include "ir/error.h"

namespace orch::stitch {
namespace {

int64_t align_up(int64_t n, int64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

}  // namespace

MemoryPlan plan_memory(std::span<const BufferRequest> buffers, int64_t alignment) {
  check(alignment > 0, "alignment {} is not positive", alignment);
  for (size_t i = 0; i < buffers.size(); ++i)
    check(buffers[i].bytes >= 0 && buffers[i].first <= buffers[i].last,
          "buffer {}: {} bytes live over [{}, {}]", i, buffers[i].bytes, buffers[i].first,
          buffers[i].last);
  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first (then earliest): big buffers claim space while the arena is empty.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    int64_t size = align_up(buffers[i].bytes, alignment);
    plan.total_bytes += size;
    // The placed buffers live at the same time as this one, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (size_t j : placed)
      if (lifetimes_overlap(buffers[i], buffers[j]))
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + align_up(buffers[j].bytes, alignment));
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, best_gap = 0, cursor = 0;
    for (auto [begin, end] : busy) {
      int64_t gap = begin - cursor;
      if (gap >= size && (best < 0 || gap < best_gap)) best = cursor, best_gap = gap;
      cursor = std::max(cursor, end);
    }
    plan.offsets[i] = best >= 0 ? best : cursor;
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[i] + size);
    placed.push_back(i);
  }
  return plan;
}

bool memory_plan_is_valid(std::span<const BufferRequest> buffers, const MemoryPlan& plan) {
  if (plan.offsets.size() != buffers.size()) return false;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (plan.offsets[i] < 0 || plan.offsets[i] + buffers[i].bytes > plan.arena_bytes) return false;
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (!lifetimes_overlap(buffers[i], buffers[j])) continue;
      if (buffers[i].bytes == 0 || buffers[j].bytes == 0) continue;
      bool apart = plan.offsets[i] + buffers[i].bytes <= plan.offsets[j] ||
                   plan.offsets[j] + buffers[j].bytes <= plan.offsets[i];
      if (!apart) return false;
    }
  }
  return true;
}

}  // namespace orch::stitch
