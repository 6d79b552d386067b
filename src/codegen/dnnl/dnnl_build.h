// Private to src/codegen/dnnl: oneDNN primitive descriptors for planned kernels (dnnl_plan.h)
// in a configuration (dnnl_config.h), and the memory descs of the tensors they read and write.
#pragma once

#include <string>
#include <vector>

#include <dnnl.hpp>

#include "codegen/dnnl/dnnl_config.h"
#include "codegen/dnnl/dnnl_plan.h"
#include "ir/graph.h"

namespace orch::codegen::dnnl_build {

using dnnl::memory;
using dnnl_config::Config;
using dnnl_plan::LinearPlan;
using dnnl_plan::View;

/// A primitive, the layouts it reads and writes, and the implementation oneDNN chose for it.
struct Built {
  dnnl::primitive primitive;
  memory::desc src, weights, dst;
  std::string impl;  // e.g. "brgconv:avx512_core", "ref:any"
};

/// User-side descs of the primitive's tensors: src, weights (as oneDNN indexes them), dst.
struct UserDescs {
  memory::desc src, weights, dst, bias;  // bias: empty when none
};

/// The CPU engine every primitive and memory is built on.
dnnl::engine& cpu_engine();

/// oneDNN dims from orch's.
memory::dims to_dims(const std::vector<int64_t>& v);

/// A plain desc of `view`; broadcast dims have size 1 (oneDNN broadcasts those itself).
memory::desc view_desc(const View& view);

/// Whether `view` is the whole of its source as stored (row-major, neither reshaped nor
/// transposed), with whole channel blocks: what a tensor the module stores blocked must be.
bool whole_blockable(const Graph& kernel, const View& view);

/// Whether kernel input `source` is one `config` stores channel-blocked.
bool stored_blocked(const Graph& kernel, ValueId source, const Config& config);

/// The desc of `view` as the module stores its source: channel-blocked when `config` says so.
memory::desc stored_desc(const Graph& kernel, const View& view, const Config& config);

/// Whether `desc` is the channel-blocked layout of its dims (blocked_desc).
bool is_blocked(const memory::desc& desc);

/// A desc of `dims` in the layout oneDNN picks.
memory::desc any_desc(const memory::dims& dims);

/// A dense desc of `dims` whose last two dims are stored column-major ([..., K, N] as [..., N, K]).
memory::desc transposed_desc(const memory::dims& dims);

/// Whether post-op `index` of `plan` is applied as a sum post-op in `config`: the first post-op
/// of a convolution (after its bias), adding a tensor of the output's shape, not broadcast
/// (dnnl_config::kResidualSum).
bool as_sum(const Graph& kernel, const LinearPlan& plan, size_t index, const Config& config);

/// dnnl_plan::plan_kernel, each convolution's leading per-channel add taken as its bias.
std::string plan_for_dnnl(const Graph& kernel, std::vector<LinearPlan>& stages);

/// A stage's primitive descriptor in `config` (and the primitive itself when `create`), for
/// model-side tensors `user`; throws dnnl::error when oneDNN has no implementation.
Built build(const Graph& kernel, const LinearPlan& plan, const UserDescs& user,
            bool constant_weights, const Config& config, bool create);

/// The model-side descs of a stage's tensors: its views as strides, its output row-major.
UserDescs user_descs(const Graph& kernel, const LinearPlan& plan);

}  // namespace orch::codegen::dnnl_build
