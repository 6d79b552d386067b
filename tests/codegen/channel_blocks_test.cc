// Tensors stored in blocks of channels (codegen/channel_blocks.h), as oneDNN's nChw16c.
#include <gtest/gtest.h>

#include "codegen/channel_blocks.h"
#include "interp/random_inputs.h"
#include "ir/error.h"

namespace orch::codegen {
namespace {

TEST(ChannelBlocks, ElementsGoWhereNChw8cPutsThem) {
  Tensor plain(DType::f32, {2, 16, 3, 5});
  for (int64_t i = 0; i < plain.numel(); ++i) plain.set(i, static_cast<double>(i));
  Tensor blocked = to_channel_blocks(plain, 8);
  // (n 1, c 11, h 2, w 4): block 1 of image 1, spatial 2 * 5 + 4, lane 3.
  int64_t plain_at = ((1 * 16 + 11) * 3 + 2) * 5 + 4;
  int64_t blocked_at = ((1 * 2 + 1) * 15 + 14) * 8 + 3;
  EXPECT_EQ(blocked.get(blocked_at), plain.get(plain_at));
  Tensor back = from_channel_blocks(blocked, 8);
  for (int64_t i = 0; i < plain.numel(); ++i) ASSERT_EQ(back.get(i), plain.get(i)) << i;
}

TEST(ChannelBlocks, PartialBlocksAreRefused) {
  Tensor t = interp::random_tensor({DType::f32, {1, 12, 4, 4}}, 1);
  try {
    to_channel_blocks(t, 8);
    FAIL() << "12 channels made blocks of 8";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no whole blocks of 8 channels"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace orch::codegen
