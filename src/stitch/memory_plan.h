// The memory planner: every intermediate buffer of a plan gets an offset in one arena, so that
// buffers whose lifetimes overlap never share bytes and buffers that are never live together do.
//
// Offline best fit: buffers are placed largest first; each goes into the smallest gap (between
// already placed buffers whose lifetimes overlap its own) that holds it, or on top of them when
// none does. Example: a [0,1] 4 KiB, b [1,2] 4 KiB, c [2,3] 4 KiB -> a at 0, b at 4096, c at 0:
// a 8 KiB arena for 12 KiB of buffers.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace orch::stitch {

/// One buffer: its size and the plan positions (kernel indices) of its first write and last
/// read, inclusive: a kernel's inputs and outputs are live together.
struct BufferRequest {
  int64_t bytes = 0;
  int first = 0;
  int last = 0;
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // one per request, multiples of the alignment
  int64_t arena_bytes = 0;       // the arena holding them all (peak footprint)
  int64_t total_bytes = 0;       // the sum of all (aligned) buffers: the arena without reuse
};

/// Places `buffers` in one arena; offsets and sizes are rounded up to `alignment`. Throws Error
/// on a negative size or a lifetime that ends before it starts.
MemoryPlan plan_memory(std::span<const BufferRequest> buffers, int64_t alignment = 64);

/// True when no two buffers with overlapping lifetimes overlap in the arena and all fit in it.
bool memory_plan_is_valid(std::span<const BufferRequest> buffers, const MemoryPlan& plan);

}  // namespace orch::stitch
