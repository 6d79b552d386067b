// Property: for random candidate kernels of random primitive graphs (fission of every rule's
// random samples) and random output tiles, the propagated regions cover everything the reference
// kernel reads for that tile. Checked by instrumented interpretation: every input and constant
// element outside its region is poisoned, and the output tile must not change.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "fission/fission.h"
#include "fission/rule.h"
#include "interp/interpreter.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "schedule/kernels.h"
#include "schedule/tile_graph.h"

namespace orch::schedule {
namespace {

bool inside(const Box& box, const Shape& shape, int64_t flat) {
  for (size_t d = shape.size(); d-- > 0;) {
    int64_t i = flat % shape[d];
    flat /= shape[d];
    if (i < box[d].lo || i > box[d].hi) return false;
  }
  return true;
}

// A copy of `t` whose elements outside `region` (everything when nullopt) are changed.
Tensor poison(const Tensor& t, const std::optional<Box>& region, std::mt19937& rng) {
  Tensor out = t.clone();
  bool floating = is_float(t.dtype());
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (region && inside(*region, t.shape(), i)) continue;
    if (floating)
      out.set(i, t.get(i) + 1000.0 + static_cast<double>(rng() % 1000));
    else if (t.dtype() == DType::boolean)
      out.set_int(i, 1 - t.get_int(i));
    else
      out.set_int(i, t.get_int(i) ^ 1);
  }
  return out;
}

bool same_element(const Tensor& a, const Tensor& b, int64_t i) {
  size_t size = dtype_size(a.dtype());
  return std::memcmp(a.bytes() + i * size, b.bytes() + i * size, size) == 0;
}

struct Counts {
  int kernels = 0;
  int checked = 0;
  int skipped = 0;  // the poisoned run failed (e.g. a poisoned index out of range)
};

void check_kernel(const Graph& kernel, std::mt19937& rng, Counts& counts) {
  TileGraph tg = make_tile_graph(kernel);
  const Shape& shape = kernel.value(tg.root).type.shape;
  if (num_elements(shape) == 0) return;
  std::vector<int64_t> tile, index;
  for (int64_t e : shape) {
    tile.push_back(1 +
                   static_cast<int64_t>(rng() % static_cast<uint64_t>(std::max<int64_t>(e, 1))));
    index.push_back(
        static_cast<int64_t>(rng() % static_cast<uint64_t>((e + tile.back() - 1) / tile.back())));
  }
  Regions regions = propagate(tg, tile_box(shape, tile, index));
  std::vector<Tensor> inputs = interp::random_inputs(kernel, rng());
  std::vector<Tensor> want = interp::interpret(kernel, inputs);
  Graph poisoned = kernel;
  std::vector<Tensor> bad_inputs;
  for (size_t i = 0; i < inputs.size(); ++i)
    bad_inputs.push_back(poison(inputs[i], regions[kernel.inputs()[i]], rng));
  for (ValueId v = 0; v < static_cast<ValueId>(kernel.num_values()); ++v) {
    Value& value = poisoned.value(v);
    if (value.is_constant() && is_float(value.type.dtype))
      value.constant = poison(value.constant, regions[v], rng);
  }
  ++counts.kernels;
  std::vector<Tensor> got;
  try {
    got = interp::interpret(poisoned, bad_inputs);
  } catch (const Error&) {
    ++counts.skipped;
    return;
  }
  ++counts.checked;
  for (size_t o = 0; o < kernel.outputs().size(); ++o) {
    if (tg.hoisted[kernel.outputs()[o]]) continue;  // computed outside the tiles
    const std::optional<Box>& region = regions[kernel.outputs()[o]];
    ASSERT_TRUE(region.has_value());
    for (int64_t i = 0; i < want[o].numel(); ++i) {
      if (!inside(*region, want[o].shape(), i)) continue;
      ASSERT_TRUE(same_element(want[o], got[o], i))
          << fmt::format("output {} element {} changed; tile [{}] at [{}]\n{}", o, i,
                         fmt::join(tile, ","), fmt::join(index, ","), print_graph(kernel));
    }
  }
}

TEST(PropagationProperty, RegionsCoverEverythingTheKernelReads) {
  Counts counts;
  std::mt19937 rng(20261129);
  IdentifyOptions options;
  options.enumeration.max_states = 200;
  for (const fission::FissionRule& rule : fission::all_rules()) {
    if (rule.sample == nullptr) continue;
    for (int sample = 0; sample < 2; ++sample) {
      Graph op_graph;
      Graph prims;
      try {
        op_graph = rule.sample(rule.op, rng);
        prims = fission::fission(op_graph);
      } catch (const Error&) {
        continue;
      }
      std::vector<CandidateKernel> kernels = candidate_kernels(prims, options);
      // A few random candidates per graph keep the test quick.
      for (int pick = 0; pick < 3 && !kernels.empty(); ++pick) {
        const CandidateKernel& k = kernels[rng() % kernels.size()];
        Graph kernel = kernel_graph(prims, k);
        SCOPED_TRACE(fmt::format("rule {} sample {}", rule.op, sample));
        check_kernel(kernel, rng, counts);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
  EXPECT_GT(counts.checked, 200) << counts.kernels << " kernels, " << counts.skipped << " skipped";
  EXPECT_LT(counts.skipped * 10, counts.kernels);
  RecordProperty("kernels_checked", counts.checked);
}

}  // namespace
}  // namespace orch::schedule
