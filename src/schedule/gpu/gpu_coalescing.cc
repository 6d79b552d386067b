// Warp access patterns through the index maps, and their sector counts.
#include "schedule/gpu/gpu_coalescing.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace orch::schedule {

WarpSectors warp_sectors(std::span<const int64_t> offsets, int64_t access_bytes, int64_t sector) {
  // Sorted starts: the accesses' byte ranges merged and their sectors counted in one pass (the
  // tile search calls this for every access of every config; sets were most of its time).
  std::vector<int64_t> starts(offsets.begin(), offsets.end());
  std::sort(starts.begin(), starts.end());
  int64_t distinct = 0, sectors = 0;
  int64_t covered = std::numeric_limits<int64_t>::min();  // bytes below this are counted
  int64_t last_sector = std::numeric_limits<int64_t>::min();
  for (int64_t o : starts) {
    int64_t end = o + access_bytes;
    distinct += std::max<int64_t>(0, end - std::max(o, covered));
    covered = std::max(covered, end);
    for (int64_t s = std::max(o / sector, last_sector + 1); s <= (end - 1) / sector; ++s)
      ++sectors, last_sector = s;
  }
  return {sectors, distinct, (distinct + sector - 1) / sector};
}

int64_t flat_index(const Shape& shape, const std::vector<int64_t>& point) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + point[d];
  return flat;
}

std::vector<std::vector<int64_t>> point_map(const TileGraph& tg,
                                            const std::vector<int64_t>& root_point) {
  const Graph& g = *tg.graph;
  const Shape& root_shape = g.value(tg.root).type.shape;
  std::vector<std::vector<int64_t>> points(g.num_values());
  for (ValueId v : g.outputs()) {
    const Shape& shape = g.value(v).type.shape;
    if (tg.hoisted[v] || tg.whole_output[v]) continue;
    // The root's point projected, as propagate projects the tile.
    points[v] = root_point;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != root_shape[d]) points[v][d] = 0;
  }
  // Backwards through the nodes; the first consumer to reach a value decides its point.
  for (NodeId n = static_cast<NodeId>(g.num_nodes()) - 1; n >= 0; --n) {
    const Node& node = g.node(n);
    const std::vector<int64_t>& out = points[node.outputs[0]];
    if (out.empty() || !tg.maps[n]) continue;
    std::vector<int64_t> loops = out;
    loops.resize(out.size() + tg.maps[n]->reduce_extents.size(), 0);
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      ValueId in = node.inputs[slot];
      if (in == kNoValue || !points[in].empty()) continue;
      const Shape& shape = g.value(in).type.shape;
      std::vector<int64_t> p(shape.size(), 0);
      for (size_t d = 0; d < shape.size(); ++d) {
        const IndexExpr& e = tg.maps[n]->inputs.at(slot).at(d);
        if (!e.is_whole()) p[d] = std::clamp<int64_t>(e.eval(loops), 0, shape[d] - 1);
      }
      points[in] = std::move(p);
    }
  }
  return points;
}

WarpPoints warp_points(const TileGraph& tg, const std::vector<int64_t>& block,
                       const std::vector<int64_t>& thread, const std::vector<int64_t>& lo,
                       int warp_size) {
  std::vector<int64_t> grid(block.size());
  int64_t threads = 1;
  for (size_t d = 0; d < grid.size(); ++d) {
    grid[d] = block[d] / thread[d];
    threads *= grid[d];
  }
  auto root_point = [&](int64_t t) {
    std::vector<int64_t> p(grid.size());
    for (size_t d = grid.size(); d-- > 0;) {
      p[d] = lo[d] + t % grid[d] * thread[d];
      t /= grid[d];
    }
    return p;
  };
  WarpPoints w;
  for (int64_t t = 0; t < std::min<int64_t>(threads, warp_size); ++t)
    w.threads.push_back(point_map(tg, root_point(t)));
  if (!thread.empty() && thread.back() > 1) {
    std::vector<int64_t> p = root_point(0);
    ++p.back();
    w.next = point_map(tg, p);
  }
  return w;
}

Box warp_box(const std::vector<int64_t>& block, const std::vector<int64_t>& thread,
             const std::vector<int64_t>& lo, int warp_size) {
  std::vector<int64_t> grid(block.size());
  int64_t threads = 1;
  for (size_t d = 0; d < grid.size(); ++d) {
    grid[d] = block[d] / thread[d];
    threads *= grid[d];
  }
  Box box(block.size(), Interval{0, -1});
  for (int64_t t = 0; t < std::min<int64_t>(threads, warp_size); ++t) {
    int64_t rest = t;
    for (size_t d = grid.size(); d-- > 0;) {
      int64_t first = lo[d] + rest % grid[d] * thread[d];
      rest /= grid[d];
      Interval tile{first, first + thread[d] - 1};
      box[d] = box[d].empty()
                   ? tile
                   : Interval{std::min(box[d].lo, tile.lo), std::max(box[d].hi, tile.hi)};
    }
  }
  return box;
}

WarpAccess direct_access(const Graph& g, const WarpPoints& w, int64_t inner, ValueId v) {
  const Shape& shape = g.value(v).type.shape;
  int64_t esize = static_cast<int64_t>(dtype_size(g.value(v).type.dtype));
  WarpAccess access;
  access.access_bytes = esize;
  if (!w.next.empty() && !w.threads.empty()) {
    const std::vector<int64_t>& a = w.threads[0][v];
    const std::vector<int64_t>& b = w.next[v];
    if (!a.empty() && !b.empty() && flat_index(shape, b) == flat_index(shape, a) + 1)
      access.access_bytes = std::min(inner * esize, std::max(kMaxVectorBytes, esize));
  }
  for (const std::vector<std::vector<int64_t>>& points : w.threads)
    if (!points[v].empty()) access.offsets.push_back(flat_index(shape, points[v]) * esize);
  return access;
}

WarpAccess staged_access(const Box& box, const Shape& shape, int64_t esize, int warp_size) {
  WarpAccess access;
  access.access_bytes = esize;
  for (int64_t t = 0; t < std::min<int64_t>(box_elements(box), warp_size); ++t) {
    std::vector<int64_t> p(box.size());
    int64_t rest = t;
    for (size_t d = box.size(); d-- > 0;) {
      p[d] = box[d].lo + rest % box[d].size();
      rest /= box[d].size();
    }
    access.offsets.push_back(flat_index(shape, p) * esize);
  }
  return access;
}

}  // namespace orch::schedule
