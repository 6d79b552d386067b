#include "codegen/channel_blocks.h"

#include <cstring>

#include "ir/error.h"

namespace orch::codegen {
namespace {

Tensor convert(const Tensor& from, int64_t block, bool to_blocks) {
  const Shape& s = from.shape();
  check(s.size() >= 3 && block > 0 && s[1] % block == 0,
        "a tensor of shape {} has no whole blocks of {} channels", format_shape(s), block);
  Tensor out(from.dtype(), s);
  int64_t batch = s[0], channels = s[1], inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  size_t size = dtype_size(from.dtype());
  const std::byte* src = from.bytes();
  std::byte* dst = out.mutable_bytes();
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t x = 0; x < inner; ++x) {
        int64_t plain = (n * channels + c) * inner + x;
        int64_t blocked = ((n * (channels / block) + c / block) * inner + x) * block + c % block;
        int64_t to = to_blocks ? blocked : plain, at = to_blocks ? plain : blocked;
        std::memcpy(dst + to * size, src + at * size, size);
      }
  return out;
}

}  // namespace

Tensor to_channel_blocks(const Tensor& plain, int64_t block) {
  return convert(plain, block, true);
}

Tensor from_channel_blocks(const Tensor& blocked, int64_t block) {
  return convert(blocked, block, false);
}

}  // namespace orch::codegen
