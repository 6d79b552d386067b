// Resize: output shapes and sampling, with expected values worked out by hand from the ONNX
// definitions (coordinate transform, then nearest / linear / cubic taps).
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/error.h"
#include "op_test_util.h"

namespace orch {
namespace {

using op_test::expect_near;

Tensor f32(Shape shape, std::vector<double> values) {
  return Tensor::from_doubles(DType::f32, std::move(shape), values);
}
Tensor i64(std::vector<int64_t> values) {
  Shape shape = {static_cast<int64_t>(values.size())};
  return Tensor::from_ints(DType::i64, shape, values);
}

// Resize(x, roi, scales, sizes) over constants. An undefined tensor is an absent input, passed
// as an empty tensor (ONNX's opset-11 spelling of "absent"; the shared infer_node cannot yet
// take kNoValue in a constant_inputs slot).
Tensor resize(Tensor x, Tensor roi, Tensor scales, Tensor sizes, Attributes attrs) {
  Graph g;
  Builder b(g);
  std::vector<ValueId> ids = {b.constant(std::move(x))};
  for (Tensor* t : {&roi, &scales, &sizes})
    ids.push_back(
        b.constant(t->defined() ? *t : Tensor(t == &sizes ? DType::i64 : DType::f32, {0})));
  b.output(b.op("Resize", ids, std::move(attrs)));
  return interp::interpret(g, {})[0];
}
Tensor resize_scales(Tensor x, std::vector<double> scales, Attributes attrs) {
  Shape shape = {static_cast<int64_t>(scales.size())};
  return resize(std::move(x), Tensor(), f32(shape, scales), Tensor(), std::move(attrs));
}
Tensor resize_sizes(Tensor x, std::vector<int64_t> sizes, Attributes attrs) {
  return resize(std::move(x), Tensor(), Tensor(), i64(sizes), std::move(attrs));
}

std::string error_of(Tensor x, Tensor roi, Tensor scales, Tensor sizes, Attributes attrs) {
  try {
    resize(std::move(x), std::move(roi), std::move(scales), std::move(sizes), std::move(attrs));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

Attributes attrs(std::string mode, std::string coord) {
  return {{"mode", std::move(mode)}, {"coordinate_transformation_mode", std::move(coord)}};
}

TEST(Resize, NearestUpsample2xAsymmetric) {
  // x_original = x / 2 = 0, 0.5, 1, 1.5; round_prefer_floor sends the halves down.
  Tensor x = Tensor::from_ints(DType::i64, {1, 1, 2, 2}, std::vector<int64_t>{1, 2, 3, 4});
  Tensor out = resize_scales(x, {1, 1, 2, 2}, attrs("nearest", "asymmetric"));
  EXPECT_EQ(out.shape(), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(out.to_ints(), (std::vector<int64_t>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST(Resize, NearestModes) {
  Tensor x = f32({4}, {10, 20, 30, 40});
  // half_pixel, 4 -> 8: x_original = -0.25, 0.25, 0.75, ..., 3.25 (clamped into [0, 3]).
  Attributes floor = attrs("nearest", "half_pixel");
  floor["nearest_mode"] = std::string("floor");
  EXPECT_EQ(resize_sizes(x, {8}, floor).to_doubles(),
            (std::vector<double>{10, 10, 10, 20, 20, 30, 30, 40}));
  Attributes ceil = attrs("nearest", "half_pixel");
  ceil["nearest_mode"] = std::string("ceil");
  EXPECT_EQ(resize_sizes(x, {8}, ceil).to_doubles(),
            (std::vector<double>{10, 20, 20, 30, 30, 40, 40, 40}));
  // asymmetric, 4 -> 8: x_original = 0, 0.5, 1, ..., 3.5; the halves go up.
  Attributes round_up = attrs("nearest", "asymmetric");
  round_up["nearest_mode"] = std::string("round_prefer_ceil");
  EXPECT_EQ(resize_sizes(x, {8}, round_up).to_doubles(),
            (std::vector<double>{10, 20, 20, 30, 30, 40, 40, 40}));
}

TEST(Resize, LinearAlignCorners1D) {
  // 3 -> 5: x_original = x * 2 / 4 = 0, 0.5, 1, 1.5, 2.
  Tensor out = resize_sizes(f32({3}, {0, 10, 30}), {5}, attrs("linear", "align_corners"));
  expect_near(out, {0, 5, 10, 20, 30});
}

TEST(Resize, LinearHalfPixelDownsample) {
  // 4 -> 2: x_original = (x + 0.5) * 2 - 0.5 = 0.5, 2.5.
  Tensor out = resize_scales(f32({4}, {1, 2, 3, 4}), {0.5}, attrs("linear", "half_pixel"));
  expect_near(out, {1.5, 3.5});
}

TEST(Resize, PytorchHalfPixelSamplesZeroForLength1) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  expect_near(resize_sizes(x, {1}, attrs("linear", "pytorch_half_pixel")), {1});
  // half_pixel instead samples (0.5 * 4) - 0.5 = 1.5.
  expect_near(resize_sizes(x, {1}, attrs("linear", "half_pixel")), {2.5});
}

TEST(Resize, TfCropAndResizeExtrapolates) {
  // roi [0.5, 1.5] of length 4, 3 outputs: x_original = 1.5 + x * 1.5 = 1.5, 3, 4.5; the last
  // lies past the input and takes the extrapolation value.
  Attributes a = attrs("linear", "tf_crop_and_resize");
  a["extrapolation_value"] = -1.0f;
  Tensor out = resize(f32({4}, {0, 10, 20, 30}), f32({2}, {0.5, 1.5}), Tensor(), i64({3}), a);
  expect_near(out, {15, 30, -1});
}

TEST(Resize, CubicAsymmetricUpsample) {
  // Keys' cubic with a = -0.75 at ratio 0.5 weighs the 4 taps -0.09375, 0.59375, 0.59375,
  // -0.09375; integer coordinates pick their element exactly.
  Tensor out = resize_scales(f32({5}, {0, 0, 1, 0, 0}), {2}, attrs("cubic", "asymmetric"));
  expect_near(out, {0, -0.09375, 0, 0.59375, 1, 0.59375, 0, -0.09375, 0, 0});
}

TEST(Resize, CubicExcludeOutsideRenormalizes) {
  // At x_original = 0.5 the taps are -1, 0, 1, 2. Edge padding gives tap -1 the value of
  // element 0 (-0.09375 + 0.59375); exclude_outside drops it and divides by 1.09375.
  Tensor x = f32({4}, {1, 0, 0, 0});
  expect_near(resize_scales(x, {2}, attrs("cubic", "asymmetric")),
              {1, 0.5, 0, -0.09375, 0, 0, 0, 0});
  Attributes a = attrs("cubic", "asymmetric");
  a["exclude_outside"] = int64_t{1};
  std::vector<double> got = resize_scales(x, {2}, a).to_doubles();
  EXPECT_NEAR(got[1], 0.59375 / 1.09375, 1e-6);
}

TEST(Resize, LinearAntialiasStretchesTheFilter) {
  // Downscaling by 2 stretches the triangle to radius 2: taps at distances 1.5, 0.5, 0.5, 1.5
  // weigh 0.25, 0.75, 0.75, 0.25, normalized by their sum 2.
  Attributes a = attrs("linear", "half_pixel");
  a["antialias"] = int64_t{1};
  Tensor out = resize_scales(f32({8}, {0, 0, 0, 4, 0, 0, 0, 0}), {0.5}, a);
  expect_near(out, {0, 1.5, 0.5, 0});
}

TEST(Resize, HalfPixelSymmetricCentresTheWindow) {
  // 4 * 0.6 = 2.4 floors to 2; offset = 2 * (1 - 2 / 2.4) = 1/3, so
  // x_original = 1/3 + (x + 0.5) / 0.6 - 0.5 = 2/3, 7/3.
  Tensor out =
      resize_scales(f32({4}, {0, 10, 20, 30}), {0.6}, attrs("linear", "half_pixel_symmetric"));
  expect_near(out, {20.0 / 3, 70.0 / 3}, 1e-5);  // f32 values near 23
}

TEST(Resize, OutputShapes) {
  Tensor x = f32({2, 4}, {0, 0, 0, 0, 0, 0, 0, 0});
  // 10 * 0.7f is exactly 7 in single precision (6.99999988 in double).
  EXPECT_EQ(resize_scales(f32({10}, std::vector<double>(10, 0)), {0.7}, {}).shape(), (Shape{7}));
  Attributes not_larger = {{"keep_aspect_ratio_policy", std::string("not_larger")}};
  EXPECT_EQ(resize_sizes(x, {4, 4}, not_larger).shape(), (Shape{2, 4}));
  Attributes not_smaller = {{"keep_aspect_ratio_policy", std::string("not_smaller")}};
  EXPECT_EQ(resize_sizes(x, {4, 4}, not_smaller).shape(), (Shape{4, 8}));
  Attributes axes = {{"axes", std::vector<int64_t>{-1}}};
  EXPECT_EQ(resize_sizes(x, {8}, axes).shape(), (Shape{2, 8}));
}

TEST(Resize, Errors) {
  Tensor x = f32({2}, {1, 2});
  EXPECT_EQ(error_of(x, Tensor(), f32({1}, {2}), i64({4}), {}),
            "Resize: exactly one of scales and sizes must be given, got both");
  EXPECT_EQ(error_of(x, Tensor(), Tensor(), i64({4}), {{"mode", std::string("area")}}),
            "Resize: mode 'area' is not one of nearest, linear, cubic");
  EXPECT_EQ(error_of(x, Tensor(), Tensor(), i64({4, 4}), {}),
            "Resize: sizes has shape [2], expected [1]");
  Tensor ints = Tensor::from_ints(DType::i32, {2}, std::vector<int64_t>{1, 2});
  EXPECT_EQ(error_of(ints, Tensor(), Tensor(), i64({4}), {{"mode", std::string("linear")}}),
            "Resize: mode 'linear' and 'cubic' need a floating-point input, got i32");
}

TEST(Resize, SizesMustBeConstant) {
  Graph g;
  Builder b(g);
  ValueId x = b.input("x", {DType::f32, {2}});
  ValueId none = b.constant(Tensor(DType::f32, {0}));
  ValueId sizes = b.input("sizes", {DType::i64, {1}});
  try {
    b.op("Resize", {x, none, none, sizes});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "Resize: input 3 ('sizes') must be a constant: orch needs static shapes, and its "
              "value decides the output shape");
  }
}

}  // namespace
}  // namespace orch
