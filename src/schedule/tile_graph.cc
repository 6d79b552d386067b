// Tile propagation, footprint (best-fit replay) and traffic (line-rounded) of a tile graph.
#include "schedule/tile_graph.h"

#include <algorithm>
#include <map>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace orch::schedule {
namespace {

Box full_box(const Shape& shape) {
  Box box;
  for (int64_t d : shape) box.push_back({0, d - 1});
  return box;
}

Box hull(const Box& a, const Box& b) {
  Box out = a;
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d].empty())
      out[d] = b[d];
    else if (!b[d].empty())
      out[d] = {std::min(a[d].lo, b[d].lo), std::max(a[d].hi, b[d].hi)};
  }
  return out;
}

void merge(std::optional<Box>& into, const Box& box) {
  into = into ? hull(*into, box) : box;
}

constexpr int64_t kMaxSplitPoints = 256;

int64_t reduce_volume(const std::optional<IndexMap>& map) {
  int64_t n = 1;
  if (map)
    for (int64_t e : map->reduce_extents) n *= e;
  return n;
}

// One tile position class: a tile index per dim and how many tiles share its regions.
struct TileClass {
  std::vector<int64_t> index;
  int64_t count = 1;
};

// First, one interior (standing for all of them) and last tile per dim: with affine maps every
// interior tile has the same region sizes, only the borders clamp.
std::vector<TileClass> tile_classes(const Shape& shape, const std::vector<int64_t>& tile) {
  std::vector<TileClass> classes{{}};
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = (shape[d] + tile[d] - 1) / tile[d];
    std::vector<std::pair<int64_t, int64_t>> dim;  // (index, count)
    if (n <= 2) {
      for (int64_t i = 0; i < n; ++i) dim.push_back({i, 1});
    } else {
      dim = {{0, 1}, {1, n - 2}, {n - 1, 1}};
    }
    std::vector<TileClass> next;
    for (const TileClass& c : classes)
      for (auto [i, count] : dim) {
        TileClass t = c;
        t.index.push_back(i);
        t.count *= count;
        next.push_back(std::move(t));
      }
    classes = std::move(next);
  }
  return classes;
}

// Best-fit allocation replay: the peak of the address space.
class BestFit {
 public:
  int64_t allocate(int64_t size) {
    auto best = free_.end();
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->second >= size && (best == free_.end() || it->second < best->second)) best = it;
    if (best != free_.end()) {
      int64_t offset = best->first, left = best->second - size;
      free_.erase(best);
      if (left > 0) free_[offset + size] = left;
      return offset;
    }
    int64_t offset = top_;
    // A free block at the top grows instead of leaving a gap below the new buffer.
    if (!free_.empty() && free_.rbegin()->first + free_.rbegin()->second == top_) {
      offset = free_.rbegin()->first;
      free_.erase(std::prev(free_.end()));
    }
    top_ = offset + size;
    peak_ = std::max(peak_, top_);
    return offset;
  }
  void release(int64_t offset, int64_t size) {
    auto [it, inserted] = free_.emplace(offset, size);
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }
  int64_t peak() const { return peak_; }

 private:
  std::map<int64_t, int64_t> free_;  // offset -> size
  int64_t top_ = 0;
  int64_t peak_ = 0;
};

struct Buffer {
  int64_t bytes = 0;
  int birth = 0;  // node index allocating it
  int death = 0;  // node index after which it is freed
  bool input = false;
};

// Per value, the box one tile keeps of an external input while its consumers run one reduce
// step at a time.
std::optional<Box> stepped_input_box(const TileGraph& tg, const Regions& regions,
                                     const TileConfig& config, ValueId v) {
  const Graph& g = *tg.graph;
  std::optional<Box> box;
  for (NodeId n : tg.consumers[v]) {
    const Node& node = g.node(n);
    const std::optional<Box>& out = regions[node.outputs[0]];
    if (!out) continue;
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      if (node.inputs[slot] != v) continue;
      merge(box, map_box(tg, n, slot, *out, config.reduce_steps.at(n)));
    }
  }
  return box;
}

int64_t round_up(int64_t n, int64_t unit) {
  return (n + unit - 1) / unit * unit;
}

// A one-element constant becomes an immediate in generated code: it occupies no memory.
bool immediate(const Value& value) {
  return value.is_constant() && value.constant.numel() == 1;
}

// The peak bytes one tile keeps at cache level `level`.
int64_t footprint(const TileGraph& tg, const Regions& regions, const TileConfig& config,
                  size_t level, int64_t line) {
  const Graph& g = *tg.graph;
  int last = static_cast<int>(g.num_nodes()) - 1;
  std::vector<Buffer> buffers;
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    const Value& value = g.value(v);
    int64_t esize = static_cast<int64_t>(dtype_size(value.type.dtype));
    if (!regions[v] || immediate(value)) continue;
    Buffer b;
    if (value.producer == kNoNode) {
      std::optional<Box> box = stepped_input_box(tg, regions, config, v);
      if (!box) continue;
      b.bytes = box_elements(*box) * esize;
      b.birth = last + 1;
      for (NodeId n : tg.consumers[v])
        if (regions[g.node(n).outputs[0]]) b.birth = std::min(b.birth, static_cast<int>(n));
      b.input = true;
    } else {
      int lv = config.level[v];
      if (lv >= 0 && (lv == 0 || static_cast<size_t>(lv) > level)) continue;
      b.bytes = box_elements(*regions[v]) * esize;
      b.birth = value.producer;
    }
    b.death = b.birth;
    for (NodeId n : tg.consumers[v]) b.death = std::max(b.death, static_cast<int>(n));
    if (config.level[v] < 0 && value.producer != kNoNode) b.death = last;
    b.bytes = round_up(b.bytes, line);
    if (b.bytes > 0) buffers.push_back(b);
  }
  BestFit heap;
  std::vector<int64_t> offsets(buffers.size());
  for (int step = 0; step <= last; ++step) {
    // Inputs a node loads come before the buffer it writes; both live through the node.
    for (bool inputs : {true, false})
      for (size_t i = 0; i < buffers.size(); ++i)
        if (buffers[i].birth == step && buffers[i].input == inputs)
          offsets[i] = heap.allocate(buffers[i].bytes);
    for (size_t i = 0; i < buffers.size(); ++i)
      if (buffers[i].death == step) heap.release(offsets[i], buffers[i].bytes);
  }
  return heap.peak();
}

// The kernel inputs and constants value `v`'s producer reads, through its inlined producers.
void stored_sources(const Graph& g, const TileConfig& config, ValueId v,
                    std::vector<bool>& sources) {
  for (ValueId in : g.node(g.value(v).producer).inputs) {
    if (in == kNoValue || sources[in]) continue;
    if (g.value(in).producer == kNoNode)
      sources[in] = true;
    else if (config.level[in] == 0)
      stored_sources(g, config, in, sources);
  }
}

// Line-rounded bytes one tile moves at `level`.
int64_t tile_traffic(const TileGraph& tg, const Regions& regions, const TileConfig& config,
                     size_t level, int64_t line) {
  const Graph& g = *tg.graph;
  auto moved = [&](ValueId v) {
    const Value& value = g.value(v);
    if (!regions[v] || immediate(value)) return int64_t{0};
    return line_bytes(*regions[v], value.type.shape,
                      static_cast<int64_t>(dtype_size(value.type.dtype)), line);
  };
  int64_t bytes = 0;
  for (ValueId v = 0; v < static_cast<ValueId>(g.num_values()); ++v) {
    int lv = config.level[v];
    if (g.value(v).producer == kNoNode || lv < 0) {
      bytes += moved(v);
    } else if (lv > 0 && static_cast<size_t>(lv) >= level) {
      // Written once, read back once; kept at a faster level it costs nothing here.
      bytes += 2 * moved(v);
      // Materialized, it is computed in a pass of its own: what it reads is read again.
      if (lv == config.memory_level) {
        std::vector<bool> sources(g.num_values(), false);
        stored_sources(g, config, v, sources);
        for (ValueId s = 0; s < static_cast<ValueId>(g.num_values()); ++s)
          if (sources[s]) bytes += moved(s);
      }
    }
  }
  return bytes;
}

// (f floordiv stride) mod size over f in [lo, hi], exactly (one interval, or the whole dim when
// the values wrap).
Interval div_mod(int64_t lo, int64_t hi, int64_t stride, int64_t size) {
  int64_t qlo = lo / stride, qhi = hi / stride;
  if (qhi - qlo >= size - 1) return {0, size - 1};
  int64_t a = qlo % size, b = qhi % size;
  return a <= b ? Interval{a, b} : Interval{0, size - 1};
}

// The input box of a Reshape, exact per group of dims with equal products (the flat index of
// one group never mixes with another's, which the generic bounds of the index map do): each
// group is evaluated per point of its outer output dims.
std::optional<Box> reshape_box(const Shape& in, const Shape& out, const Box& obox) {
  for (const Interval& i : obox)
    if (i.empty()) return std::nullopt;
  Box box;
  for (int64_t d : in) box.push_back({0, d - 1});  // size-1 input dims: [0, 0]
  std::vector<size_t> ins, outs;
  for (size_t d = 0; d < in.size(); ++d)
    if (in[d] != 1) ins.push_back(d);
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] != 1) outs.push_back(d);
  size_t i = 0, o = 0;
  while (i < ins.size() && o < outs.size()) {
    std::vector<size_t> gi{ins[i++]}, go{outs[o++]};
    int64_t pi = in[gi[0]], po = out[go[0]];
    while (pi != po) {
      if (pi < po && i < ins.size()) {
        gi.push_back(ins[i]);
        pi *= in[ins[i++]];
      } else if (po < pi && o < outs.size()) {
        go.push_back(outs[o]);
        po *= out[outs[o++]];
      } else {
        return std::nullopt;
      }
    }
    std::vector<int64_t> ostride(go.size(), 1), istride(gi.size(), 1);
    for (size_t t = go.size() - 1; t-- > 0;) ostride[t] = ostride[t + 1] * out[go[t + 1]];
    for (size_t t = gi.size() - 1; t-- > 0;) istride[t] = istride[t + 1] * in[gi[t + 1]];
    int64_t points = 1;
    for (size_t t = 0; t + 1 < go.size(); ++t) points *= obox[go[t]].size();
    if (points > kMaxSplitPoints) continue;  // the group stays whole
    std::vector<std::optional<Interval>> joined(gi.size());
    for (int64_t p = 0; p < points; ++p) {
      int64_t rest = p, base = 0;
      for (size_t t = go.size() - 1; t-- > 0;) {
        base += (obox[go[t]].lo + rest % obox[go[t]].size()) * ostride[t];
        rest /= obox[go[t]].size();
      }
      int64_t lo = base + obox[go.back()].lo, hi = base + obox[go.back()].hi;
      for (size_t u = 0; u < gi.size(); ++u) {
        Interval r = div_mod(lo, hi, istride[u], in[gi[u]]);
        joined[u] =
            joined[u] ? Interval{std::min(joined[u]->lo, r.lo), std::max(joined[u]->hi, r.hi)} : r;
      }
    }
    for (size_t u = 0; u < gi.size(); ++u) box[gi[u]] = *joined[u];
  }
  return box;
}

}  // namespace

TileGraph make_tile_graph(const Graph& kernel) {
  check(!kernel.outputs().empty(), "tile graph: the kernel has no outputs");
  TileGraph tg;
  tg.graph = &kernel;
  tg.consumers.resize(kernel.num_values());
  for (NodeId n = 0; n < static_cast<NodeId>(kernel.num_nodes()); ++n) {
    const Node& node = kernel.node(n);
    for (ValueId v : node.inputs)
      if (v != kNoValue) tg.consumers[v].push_back(n);
    const OpSchema* schema = find_op(node.op);
    bool mapped = schema != nullptr && schema->index_map != nullptr && node.outputs.size() == 1 &&
                  std::find(node.inputs.begin(), node.inputs.end(), kNoValue) == node.inputs.end();
    if (!mapped) {
      tg.maps.push_back(std::nullopt);
      continue;
    }
    std::vector<TensorType> types;
    for (ValueId v : node.inputs) types.push_back(kernel.value(v).type);
    tg.maps.push_back(schema->index_map(node.attrs, types, kernel.value(node.outputs[0]).type));
  }
  for (NodeId n = 0; n < static_cast<NodeId>(kernel.num_nodes()); ++n) {
    std::string text =
        tg.maps[n] ? format_index_map(*tg.maps[n],
                                      kernel.value(kernel.node(n).outputs[0]).type.shape.size())
                   : "";
    tg.split.push_back(text.find("floordiv") != std::string::npos ||
                       text.find("mod") != std::string::npos);
  }
  // Weight preprocessing (computed from constants alone) does not decide the tiling.
  std::vector<bool> from_constants(kernel.num_values(), false);
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v)
    from_constants[v] = kernel.value(v).is_constant();
  for (const Node& node : kernel.nodes()) {
    bool constant = std::all_of(node.inputs.begin(), node.inputs.end(),
                                [&](ValueId v) { return v == kNoValue || from_constants[v]; });
    for (ValueId v : node.outputs) from_constants[v] = constant;
  }
  auto rank = [&](ValueId v) {
    return std::pair(!from_constants[v], num_elements(kernel.value(v).type.shape));
  };
  for (ValueId v : kernel.outputs())
    if (tg.root == kNoValue || rank(v) > rank(tg.root)) tg.root = v;
  tg.whole_output.assign(kernel.num_values(), false);
  tg.hoisted.assign(kernel.num_values(), false);
  const Shape& root_shape = kernel.value(tg.root).type.shape;
  for (ValueId v : kernel.outputs()) {
    const Shape& shape = kernel.value(v).type.shape;
    bool projects = shape.size() == root_shape.size();
    for (size_t d = 0; projects && d < shape.size(); ++d)
      projects = shape[d] == root_shape[d] || shape[d] == 1;
    // Weight preprocessing that does not follow the tile is hoisted out of the tile loop.
    tg.whole_output[v] = !projects && !from_constants[v];
    tg.hoisted[v] = !projects && from_constants[v];
  }
  return tg;
}

Box written_box(const TileGraph& tg, ValueId output, const Box& tile) {
  const Shape& shape = tg.graph->value(output).type.shape;
  const Shape& root_shape = tg.graph->value(tg.root).type.shape;
  // The root's tile projected: a size-1 dim of a keepdims reduction is written whole.
  Box box = tile;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] != root_shape[d]) box[d] = {0, 0};
  return box;
}

Regions propagate(const TileGraph& tg, const Box& tile) {
  const Graph& g = *tg.graph;
  Regions regions(g.num_values());
  for (ValueId v : g.outputs()) {
    if (tg.hoisted[v]) continue;
    if (tg.whole_output[v]) {
      merge(regions[v], full_box(g.value(v).type.shape));
      continue;
    }
    merge(regions[v], written_box(tg, v, tile));
  }
  for (NodeId n = static_cast<NodeId>(g.num_nodes()) - 1; n >= 0; --n) {
    const Node& node = g.node(n);
    bool needed = std::any_of(node.outputs.begin(), node.outputs.end(),
                              [&](ValueId v) { return regions[v].has_value(); });
    if (!needed) continue;
    for (size_t slot = 0; slot < node.inputs.size(); ++slot) {
      ValueId in = node.inputs[slot];
      if (in == kNoValue) continue;
      merge(regions[in], map_box(tg, n, slot, *regions[node.outputs[0]]));
    }
  }
  return regions;
}

Box map_box(const TileGraph& tg, NodeId n, size_t slot, const Box& out,
            const std::vector<int64_t>& steps, const std::vector<int64_t>& starts) {
  const Graph& g = *tg.graph;
  const Shape& shape = g.value(g.node(n).inputs[slot]).type.shape;
  if (!tg.maps[n]) return full_box(shape);
  const IndexMap& map = *tg.maps[n];
  if (g.node(n).op == "prim.Reshape")
    if (std::optional<Box> box = reshape_box(shape, g.value(g.node(n).outputs[0]).type.shape, out))
      return *box;
  auto eval = [&](const Box& o) {
    std::vector<Interval> loops = o;
    for (size_t r = 0; r < map.reduce_extents.size(); ++r) {
      int64_t start = starts.empty() ? 0 : starts.at(r);
      int64_t end = steps.empty() ? map.reduce_extents[r]
                                  : std::min(start + steps.at(r), map.reduce_extents[r]);
      loops.push_back({start, end - 1});
    }
    Box box;
    for (size_t d = 0; d < shape.size(); ++d) {
      Interval dim{0, shape[d] - 1};
      Interval r = map.inputs.at(slot).at(d).eval(loops, dim);
      box.push_back({std::max(r.lo, dim.lo), std::min(r.hi, dim.hi)});
    }
    return box;
  };
  int64_t points = 1;
  for (size_t d = 0; d + 1 < out.size(); ++d) points *= out[d].size();
  if (!tg.split[n] || points <= 1 || points > kMaxSplitPoints) return eval(out);
  // A box the plain bounds already give exactly (no more elements than the tile reads) needs
  // no splitting.
  Box plain = eval(out);
  int64_t reads = box_elements(out);
  for (int64_t e : map.reduce_extents) reads *= e;
  if (box_elements(plain) <= reads) return plain;
  std::optional<Box> joined;
  Box point = out;
  for (int64_t p = 0; p < points; ++p) {
    int64_t rest = p;
    for (size_t d = out.size() - 1; d-- > 0;) {
      int64_t v = out[d].lo + rest % out[d].size();
      rest /= out[d].size();
      point[d] = {v, v};
    }
    Box box = eval(point);
    if (box_elements(box) > 0) merge(joined, box);
  }
  return joined ? *joined : plain;
}

int64_t box_elements(const Box& box) {
  int64_t n = 1;
  for (const Interval& i : box) n *= i.size();
  return n;
}

int64_t line_bytes(const Box& box, const Shape& shape, int64_t element_size, int64_t line) {
  if (box_elements(box) == 0) return 0;
  int j = static_cast<int>(box.size()) - 1;
  while (j >= 0 && box[j].size() == shape[j]) --j;
  int64_t run = 1, runs = 1;
  for (int d = static_cast<int>(box.size()) - 1; d > j; --d) run *= shape[d];
  if (j >= 0) run *= box[j].size();
  for (int d = 0; d < j; ++d) runs *= box[d].size();
  return runs * round_up(run * element_size, line);
}

int64_t tile_count(const Shape& shape, const std::vector<int64_t>& tile) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) n *= (shape[d] + tile[d] - 1) / tile[d];
  return n;
}

Box tile_box(const Shape& shape, const std::vector<int64_t>& tile,
             const std::vector<int64_t>& index) {
  Box box;
  for (size_t d = 0; d < shape.size(); ++d)
    box.push_back({index[d] * tile[d], std::min(shape[d], (index[d] + 1) * tile[d]) - 1});
  return box;
}

int64_t tile_work(const TileGraph& tg, const std::vector<int64_t>& tile,
                  const std::vector<int64_t>& index) {
  const Graph& g = *tg.graph;
  Regions regions = propagate(tg, tile_box(g.value(tg.root).type.shape, tile, index));
  int64_t work = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n)
    for (ValueId v : g.node(n).outputs)
      if (regions[v]) work += box_elements(*regions[v]) * reduce_volume(tg.maps[n]);
  return work;
}

TileRegions tile_regions(const TileGraph& tg, const std::vector<int64_t>& tile) {
  const Shape& shape = tg.graph->value(tg.root).type.shape;
  TileRegions out;
  for (const TileClass& c : tile_classes(shape, tile)) {
    bool interior = true;
    for (size_t d = 0; d < shape.size(); ++d)
      interior &= c.index[d] == ((shape[d] + tile[d] - 1) / tile[d] >= 3 ? 1 : 0);
    if (interior) out.interior = out.regions.size();
    out.counts.push_back(c.count);
    out.tiles.push_back(tile_box(shape, tile, c.index));
    out.regions.push_back(propagate(tg, out.tiles.back()));
  }
  return out;
}

TileCost evaluate(const TileGraph& tg, const Machine& machine, const TileConfig& config,
                  size_t tile_level) {
  return evaluate(tg, machine, config, tile_level, tile_regions(tg, config.tile));
}

TileCost evaluate(const TileGraph& tg, const Machine& machine, const TileConfig& config,
                  size_t tile_level, const TileRegions& tiles) {
  const Graph& g = *tg.graph;
  const Shape& shape = g.value(tg.root).type.shape;
  size_t levels = machine.levels.size();
  TileCost cost;
  cost.tiles = tile_count(shape, config.tile);
  cost.waves = (cost.tiles + machine.cores - 1) / machine.cores;
  cost.footprint.assign(levels, 0);
  cost.traffic.assign(levels, 0);
  for (size_t l = 1; l < levels; ++l) {
    int64_t line = machine.levels[l].line;
    // The interior tile has the widest halo: its footprint bounds every tile's.
    if (l + 1 < levels && !tiles.regions.empty())
      cost.footprint[l] = footprint(tg, tiles.regions[tiles.interior], config, l, line);
    for (size_t c = 0; c < tiles.regions.size(); ++c)
      cost.traffic[l] += tiles.counts[c] * tile_traffic(tg, tiles.regions[c], config, l, line);
  }
  double memory_bw = machine.levels.back().bandwidth_gbs;
  double weighted = 0;
  for (size_t l = 1; l < levels; ++l)
    weighted += static_cast<double>(cost.traffic[l]) * memory_bw / machine.levels[l].bandwidth_gbs;
  cost.cost_per_tile = weighted / static_cast<double>(cost.tiles);
  cost.score = (cost.cost_per_tile + 1) * static_cast<double>(cost.waves);
  for (size_t l = 1; l + 1 < levels; ++l) {
    bool holds = l == tile_level || std::find(config.level.begin(), config.level.end(),
                                              static_cast<int>(l)) != config.level.end();
    int64_t capacity = machine.tile_capacity(l);
    if (holds && cost.footprint[l] > capacity) {
      cost.fits = false;
      cost.reason = fmt::format("footprint {} B exceeds {} ({} B per tile)", cost.footprint[l],
                                machine.levels[l].name, capacity);
      break;
    }
  }
  return cost;
}

}  // namespace orch::schedule
