// Affine staged regions: measured between interior blocks, checked at the edges.
#include "schedule/gpu/gpu_staging.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string_view>

namespace orch::schedule {
namespace {

// Primitives whose input regions move with their output tile by a fixed stride (coordinates
// clamped into the input at padded edges at most).
const std::set<std::string_view> kAffineOps = {
    "prim.Elementwise", "prim.Broadcast", "prim.Transpose", "prim.MatMul", "prim.Reduce",
    "prim.Conv",        "prim.Slice",     "prim.Pad",       "prim.Reshape"};

// More checked blocks than this (4 per dim of a high-rank root): nothing is staged.
constexpr size_t kMaxCheckedBlocks = 1024;

// A convolution's map divides the output channel by the channels per group: constant with one
// group, the identity depthwise (one output channel per group), affine in the block otherwise
// only for some channel tiles.
bool affine_channels(const Graph& g, const Node& conv) {
  int64_t group = attr_int(conv.attrs, "group", 1);
  return group == 1 || g.value(conv.outputs[0]).type.shape[1] == group;
}

constexpr int64_t kSharedAlign = 16;

int64_t aligned(int64_t bytes) {
  return (bytes + kSharedAlign - 1) / kSharedAlign * kSharedAlign;
}

}  // namespace

int64_t staged_pitch(const std::vector<int64_t>& size, int64_t esize) {
  int64_t row = size.empty() ? 1 : size.back(), rows = 1;
  for (size_t j = 0; j + 1 < size.size(); ++j) rows *= size[j];
  return esize == 4 && rows > 1 && row % 2 == 0 ? row + 1 : row;
}

int64_t staged_array_bytes(const std::vector<int64_t>& size, int64_t esize) {
  int64_t rows = 1;
  for (size_t j = 0; j + 1 < size.size(); ++j) rows *= size[j];
  return aligned(rows * staged_pitch(size, esize) * esize);
}

int64_t partials_bytes(int64_t threads, int64_t warp_size) {
  return aligned(threads / warp_size * 8);
}

namespace {

bool affine_node(const TileGraph& tg, NodeId n) {
  const Graph& g = *tg.graph;
  const Node& node = g.node(n);
  if (!tg.maps[n] || kAffineOps.count(node.op) == 0) return false;
  if (node.op == "prim.Conv" ? !affine_channels(g, node) : tg.split[n]) return false;
  return node.op != "prim.Pad" || attr_string(node.attrs, "mode", "constant") != "reflect";
}

}  // namespace

std::vector<bool> affinely_placed(const TileGraph& tg) {
  const Graph& g = *tg.graph;
  std::vector<bool> placed(g.num_values(), true);
  // Readers before what they read: a value's region is the hull of the boxes its readers need.
  for (NodeId n = static_cast<NodeId>(g.num_nodes()) - 1; n >= 0; --n) {
    const Node& node = g.node(n);
    bool moves = affine_node(tg, n) && std::all_of(node.outputs.begin(), node.outputs.end(),
                                                   [&](ValueId v) { return placed[v]; });
    if (moves) continue;
    for (ValueId in : node.inputs)
      if (in != kNoValue) placed[in] = false;
  }
  return placed;
}

namespace {

// Per dim of `counts`: the indices checked, the first two and the last two.
std::vector<std::vector<int64_t>> checked_indices(const std::vector<int64_t>& counts) {
  std::vector<std::vector<int64_t>> picks;
  for (int64_t n : counts) {
    std::set<int64_t> dim;
    for (int64_t i : {int64_t{0}, int64_t{1}, n - 2, n - 1})
      if (i >= 0 && i < n) dim.insert(i);
    picks.emplace_back(dim.begin(), dim.end());
  }
  return combinations(picks);
}

// Where blocks and reduce steps are: the block index per root dim, then the step index per
// reduce axis of the stepped node.
struct Layout {
  const TileGraph* tg = nullptr;
  const GpuTileConfig* config = nullptr;
  NodeId stepped = kNoNode;
  size_t rank = 0;              // root dims; the rest of a position are reduce axes
  std::vector<int64_t> counts;  // blocks per root dim, steps per reduce axis
};

// The region of staged `v` at `position`: the stepped node reads one reduce step's window.
std::optional<Box> region_at(const Layout& l, const Regions& regions, ValueId v,
                             const std::vector<int64_t>& position) {
  if (l.stepped == kNoNode) return staged_box(*l.tg, regions, v, 0);
  std::vector<int64_t> starts;
  for (size_t a = l.rank; a < position.size(); ++a)
    starts.push_back(position[a] * l.config->reduce_step);
  return staged_box(*l.tg, regions, v, l.config->reduce_step, starts, l.stepped);
}

int64_t origin(const StagedRegion& s, size_t j, const std::vector<int64_t>& position) {
  int64_t o = s.offset[j];
  for (size_t d = 0; d < s.step[j].size(); ++d) o += s.step[j][d] * position[d];
  for (size_t a = 0; a < s.reduce_step[j].size(); ++a)
    o += s.reduce_step[j][a] * position[s.step[j].size() + a];
  return o;
}

}  // namespace

bool StagedRegion::stepped() const {
  for (const std::vector<int64_t>& r : reduce_step)
    for (int64_t x : r)
      if (x != 0) return true;
  return false;
}

std::vector<StagedRegion> staged_regions(const TileGraph& tg, const GpuTileConfig& config,
                                         NodeId stepped, const std::vector<bool>& computed) {
  const Graph& g = *tg.graph;
  const Shape& shape = g.value(tg.root).type.shape;
  if (config.reduce_step > 0 && (stepped == kNoNode || !tg.maps[stepped])) return {};
  std::vector<bool> placed = affinely_placed(tg);
  Layout l{&tg, &config, config.reduce_step > 0 ? stepped : kNoNode, shape.size(), {}};
  for (size_t d = 0; d < l.rank; ++d)
    l.counts.push_back((shape[d] + config.block[d] - 1) / config.block[d]);
  if (l.stepped != kNoNode)
    for (int64_t e : tg.maps[stepped]->reduce_extents)
      l.counts.push_back((e + config.reduce_step - 1) / config.reduce_step);
  TileRegions tiles = tile_regions(tg, config.block);
  std::vector<bool> staged = staged_values(tg, tiles.regions[tiles.interior]);
  for (ValueId v = 0; v < static_cast<ValueId>(computed.size()); ++v)
    staged[v] = staged[v] || computed[v];
  std::vector<int64_t> reference;
  for (int64_t n : l.counts) reference.push_back(n >= 3 ? 1 : 0);
  auto block_regions = [&](const std::vector<int64_t>& position) {
    std::vector<int64_t> block(position.begin(), position.begin() + static_cast<long>(l.rank));
    return propagate(tg, tile_box(shape, config.block, block));
  };
  Regions base_regions = block_regions(reference);
  std::vector<StagedRegion> out;
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    if (!staged[v] || !placed[v] || !base_regions[v]) continue;
    std::optional<Box> base = region_at(l, base_regions, v, reference);
    if (!base) continue;
    StagedRegion s;
    s.value = v;
    std::vector<std::vector<int64_t>> moves(base->size(), std::vector<int64_t>(l.counts.size()));
    for (size_t p = 0; p < l.counts.size(); ++p) {
      if (l.counts[p] == 1) continue;
      std::vector<int64_t> next = reference;
      ++next[p];
      std::optional<Box> moved = region_at(l, block_regions(next), v, next);
      if (moved)
        for (size_t j = 0; j < base->size(); ++j) moves[j][p] = (*moved)[j].lo - (*base)[j].lo;
    }
    for (size_t j = 0; j < base->size(); ++j) {
      s.step.emplace_back(moves[j].begin(), moves[j].begin() + static_cast<long>(l.rank));
      s.reduce_step.emplace_back(moves[j].begin() + static_cast<long>(l.rank), moves[j].end());
      s.offset.push_back((*base)[j].lo);
      for (size_t p = 0; p < l.counts.size(); ++p) s.offset[j] -= moves[j][p] * reference[p];
      s.size.push_back((*base)[j].size());
    }
    out.push_back(std::move(s));
  }
  std::vector<std::vector<int64_t>> checked = checked_indices(l.counts);
  if (checked.size() > kMaxCheckedBlocks) return {};
  std::vector<bool> broken(out.size(), false);
  for (const std::vector<int64_t>& position : checked) {
    Regions regions = block_regions(position);
    for (size_t i = 0; i < out.size(); ++i) {
      StagedRegion& s = out[i];
      std::optional<Box> box = region_at(l, regions, s.value, position);
      if (!box) continue;
      for (size_t j = 0; j < box->size(); ++j) {
        int64_t o = origin(s, j, position);
        if ((*box)[j].lo < o) broken[i] = true;
        s.size[j] = std::max(s.size[j], (*box)[j].hi - o + 1);
      }
    }
  }
  std::vector<StagedRegion> kept;
  for (size_t i = 0; i < out.size(); ++i)
    if (!broken[i]) kept.push_back(std::move(out[i]));
  return kept;
}

}  // namespace orch::schedule
