#include "codegen/dnnl/dnnl_config.h"

#include <algorithm>

#include <fmt/format.h>

#include "ir/error.h"

namespace orch::codegen::dnnl_config {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

void parse_stored_blocked(std::string_view ports, Config& config) {
  for (std::string_view port : split(ports, ',')) {
    if (port == "o0") {
      config.blocked_output = true;
      continue;
    }
    std::string digits(port.substr(std::min<size_t>(1, port.size())));
    bool number =
        !digits.empty() && digits.size() < 6 &&
        std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
    check(port.starts_with('i') && number,
          "oneDNN backend: stored-blocked port '{}' is neither i<input index> nor o0", port);
    config.blocked_inputs.push_back(std::stoi(digits));
  }
}

}  // namespace

Config parse_config(const std::string& text) {
  Config config;
  if (text.empty()) return config;
  bool layout_set = false;
  for (std::string_view token : split(text, ';')) {
    if (token.starts_with(kStoredBlocked)) {
      parse_stored_blocked(token.substr(kStoredBlocked.size()), config);
      continue;
    }
    check(!layout_set, "oneDNN backend: configuration '{}' sets two layouts", text);
    layout_set = true;
    if (token == kPlainLayout)
      config.plain = true;
    else if (token == kBlockedLayout)
      config.blocked = true;
    else if (token == kTransposedWeights)
      config.transposed_weights = true;
    else if (token == kResidualSum)
      config.residual_sum = true;
    else
      fail(
          "oneDNN backend: unknown configuration '{}' (known: '{}', '{}', '{}', '{}', and '{}' "
          "with ports)",
          text, kPlainLayout, kBlockedLayout, kTransposedWeights, kResidualSum, kStoredBlocked);
  }
  return config;
}

std::string with_stored_blocked(const std::string& config, const std::vector<int>& inputs,
                                bool output) {
  std::vector<std::string> ports;
  for (int i : inputs) ports.push_back(fmt::format("i{}", i));
  if (output) ports.emplace_back("o0");
  if (ports.empty()) return config;
  std::string token = fmt::format("{}{}", kStoredBlocked, fmt::join(ports, ","));
  return config.empty() ? token : config + ";" + token;
}

int64_t channel_block() {
  using isa = dnnl::cpu_isa;
  isa cpu = dnnl::get_effective_cpu_isa();
  bool wide = cpu == isa::avx512_core || cpu == isa::avx512_core_vnni ||
              cpu == isa::avx512_core_bf16 || cpu == isa::avx512_core_amx;
  return wide ? 16 : 8;
}

dnnl::memory::desc blocked_desc(const dnnl::memory::dims& dims) {
  using tag = dnnl::memory::format_tag;
  static const tag by_rank[][2] = {
      {tag::aBc8b, tag::aBc16b}, {tag::aBcd8b, tag::aBcd16b}, {tag::aBcde8b, tag::aBcde16b}};
  size_t rank = dims.size();
  check(rank >= 3 && rank <= 5, "no channel-blocked layout for rank {}", rank);
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                            by_rank[rank - 3][channel_block() == 16 ? 1 : 0]);
}

}  // namespace orch::codegen::dnnl_config
