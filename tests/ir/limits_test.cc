// Hostile inputs to the text parser, the .npy reader and Tensor: absurd or overflowing sizes
// fail with an Error naming the value before anything is allocated.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/npy.h"
#include "ir/tensor.h"
#include "ir/text_format.h"

namespace orch {
namespace {

std::string parse_error(const std::string& text) {
  try {
    parse_graph(text);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "parse succeeded";
  return "";
}

std::string npy_error(const std::string& header_dict, const std::string& data = "") {
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) +
                      static_cast<char>(header_dict.size() & 0xff) +
                      static_cast<char>(header_dict.size() >> 8) + header_dict + data;
  try {
    parse_npy(bytes, "x.npy");
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "parse succeeded";
  return "";
}

// A shape input with more entries than any model has dims: an error naming the node (found by
// fuzz_onnx_import as a Reshape to rank 4,194,305, which took 37 s under ASan).
TEST(TextLimits, RankAbove64Fails) {
  std::vector<int> ones(65, 1);
  std::string message = parse_error(fmt::format(
      "graph g(%x: f32[1]) {{\n  const %s = i64[65]{{{}}}\n  %y: f32[1] = Reshape(%x, %s)\n"
      "  return %y\n}}\n",
      fmt::join(ones, ", ")));
  EXPECT_NE(message.find("an output of rank 65 (orch allows up to 64)"), std::string::npos)
      << message;
}

// Found by fuzz_text_parser: a float Range of 1.2e20 elements cast its count to int64
// (undefined behaviour) before any size check.
TEST(TextLimits, RangeOfMoreThan2To62ElementsFails) {
  std::string message = parse_error(
      "graph g() {\n  const %s = f32[]{0}\n  const %l = f32[]{1e20}\n  const %d = f32[]{1}\n"
      "  %r: f32[1] = Range(%s, %l, %d)\n  return %r\n}\n");
  EXPECT_NE(
      message.find(
          "Range: range from 0 to 1.0000000200408773e+20 by 1 has 1.0000000200408773e+20 elements"),
      std::string::npos)
      << message;
  message = parse_error(
      "graph g() {\n  const %s = i64[]{-9223372036854775808}\n"
      "  const %l = i64[]{9223372036854775807}\n  const %d = i64[]{1}\n"
      "  %r: i64[1] = Range(%s, %l, %d)\n  return %r\n}\n");
  EXPECT_NE(message.find("has more than 2^62 elements"), std::string::npos) << message;
}

TEST(TextLimits, AbsurdConstantShapeFailsBeforeAllocating) {
  std::string message =
      parse_error("graph g() {\n  const %w = f32[1000000,1000000]{1, 2, 3}\n  return %w\n}\n");
  EXPECT_NE(message.find("constant '%w': line 2: f32[1000000,1000000] needs 1000000000000 values "
                         "but the text has only"),
            std::string::npos)
      << message;
}

TEST(TextLimits, ConstantWhoseBytesWouldWrapFails) {
  // 2^61 f64 elements pass the element limit (2^62) but their bytes wrap size_t.
  std::string message =
      parse_error("graph g() {\n  const %w = f64[2305843009213693952]{1}\n  return %w\n}\n");
  EXPECT_NE(message.find("constant '%w'"), std::string::npos) << message;
}

TEST(TextLimits, NegativeDimFails) {
  std::string message = parse_error("graph g(%x: f32[-1,3]) {\n  return %x\n}\n");
  EXPECT_NE(message.find("line 1: negative dimension -1 in shape [-1,3]"), std::string::npos)
      << message;
}

TEST(TextLimits, OverflowingDimsFail) {
  std::string message =
      parse_error("graph g(%x: f32[4294967296,4294967296,4]) {\n  return %x\n}\n");
  EXPECT_NE(message.find("line 1: shape [4294967296,4294967296,4] has too many elements"),
            std::string::npos)
      << message;
}

TEST(TextLimits, EmptyShapeWithOverflowingOtherDimsFails) {
  // The tensor is empty, but its strides would still multiply 2^33 by 2^33.
  std::string message =
      parse_error("graph g(%x: f32[0,8589934592,8589934592]) {\n  return %x\n}\n");
  EXPECT_NE(message.find("line 1: shape [0,8589934592,8589934592] has too many elements"),
            std::string::npos)
      << message;
}

TEST(TextLimits, DimPastInt64Fails) {
  std::string message = parse_error("graph g(%x: f32[99999999999999999999]) {\n  return %x\n}\n");
  EXPECT_NE(message.find("bad integer '99999999999999999999'"), std::string::npos) << message;
}

TEST(TextLimits, HugeAttributeListNamesTheNode) {
  std::string perm = "0";
  for (int i = 1; i < 100000; ++i) perm += "," + std::to_string(i);
  std::string message =
      parse_error("graph g(%x: f32[2,3]) {\n  %y: f32[3,2] = Transpose(%x) {perm = [" + perm +
                  "]} @t\n  return %y\n}\n");
  EXPECT_NE(message.find("line 2: Transpose 't'"), std::string::npos) << message;
}

TEST(TextLimits, BadU64LiteralIsAnError) {
  // Was std::invalid_argument from std::stoull, not an orch::Error.
  std::string message = parse_error("graph g() {\n  const %c = u64[1]{x}\n  return %c\n}\n");
  EXPECT_NE(message.find("constant '%c': line 2: bad integer 'x'"), std::string::npos) << message;
}

TEST(TextLimits, TileOverflowNamesTheNode) {
  // From fuzz_onnx_import (tests/data/fuzz_regressions/onnx_import/tile_repeats_overflow.onnx):
  // the output dim overflowed int64 (undefined behaviour) in Tile's shape rule.
  std::string message = parse_error(
      "graph g(%x: f32[2]) {\n  const %r = i64[1]{7012104619815862274}\n"
      "  %y: f32[2] = Tile(%x, %r) @t\n  return %y\n}\n");
  EXPECT_NE(message.find("line 3: Tile 't': repeats[0] = 7012104619815862274 makes dim 2 overflow"),
            std::string::npos)
      << message;
}

TEST(TextLimits, DepthToSpaceOverflowNamesTheNode) {
  // From fuzz_text_parser (tests/data/fuzz_regressions/text_parser/
  // depth_to_space_huge_blocksize.orch.txt): blocksize^2 overflowed int64.
  std::string message = parse_error(
      "graph g(%x: f32[1,8,1,1]) {\n"
      "  %y: f32[1,2,2,2] = DepthToSpace(%x) {blocksize = 21111111111} @d\n  return %y\n}\n");
  EXPECT_NE(message.find("line 2: DepthToSpace 'd': blocksize^2 is 4.457e+20 (out of range"),
            std::string::npos)
      << message;
}

// A window's span and its padded input are computed past int64 and rejected, not wrapped.
TEST(TextLimits, HugeWindowParametersFail) {
  std::string dilated = parse_error(
      "graph g(%x: f32[1,1,4], %w: f32[1,1,3]) {\n"
      "  %y: f32[1,1,2] = Conv(%x, %w) {dilations = [6000000000000000000]} @c\n  return %y\n}\n");
  EXPECT_NE(dilated.find("line 2: Conv 'c': dilated kernel is 1.2e+19 (out of range"),
            std::string::npos)
      << dilated;
  std::string padded = parse_error(
      "graph g(%x: f32[1,1,4], %w: f32[1,1,3]) {\n  %y: f32[1,1,2] = Conv(%x, %w) "
      "{pads = [9000000000000000000, 9000000000000000000]} @c\n  return %y\n}\n");
  EXPECT_NE(padded.find("line 2: Conv 'c': padded spatial dim is 1.8e+19 (out of range"),
            std::string::npos)
      << padded;
}

TEST(TensorLimits, BytesThatWrapSizeTFail) {
  try {
    Tensor t(DType::f64, {int64_t{1} << 61});
    FAIL() << "allocated " << t.nbytes() << " bytes";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "a f64 tensor of shape [2305843009213693952] is too large");
  }
}

TEST(NpyLimits, AbsurdShapeFailsBeforeAllocating) {
  std::string message =
      npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }",
                std::string(8, '\0'));
  EXPECT_EQ(message, "'x.npy' is truncated: 8 data bytes, need 4000000000000");
}

TEST(NpyLimits, OverflowingDimsFail) {
  std::string message =
      npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }");
  EXPECT_EQ(message, "'x.npy': shape [4294967296,4294967296,4] has too many elements");
}

TEST(NpyLimits, DimPastInt64Fails) {
  // Was std::out_of_range from std::stoll.
  std::string message =
      npy_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }");
  EXPECT_EQ(message, "'x.npy': dim '99999999999999999999' is too large");
}

TEST(NpyLimits, EmptyDescrIsUnsupported) {
  // Was std::out_of_range from descr.substr(1).
  std::string message = npy_error("{'descr': '', 'fortran_order': False, 'shape': (1,), }");
  EXPECT_EQ(message, "'x.npy': unsupported .npy dtype ''");
}

TEST(NpyLimits, HeaderLongerThanNumpyAllowsFails) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  header.append(20000, ' ');
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8) +
                      static_cast<char>(header.size() & 0xff) +
                      static_cast<char>(header.size() >> 8) + std::string(2, '\0') + header;
  try {
    parse_npy(bytes, "x.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.what(),
              "'x.npy': .npy header of " + std::to_string(header.size()) + " bytes is too long");
  }
}

}  // namespace
}  // namespace orch
