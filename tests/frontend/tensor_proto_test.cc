// TensorProto <-> Tensor for every dtype, the typed fields, external data and .pb files.
#include <gtest/gtest.h>

#include <fstream>

#include "frontend/tensor_proto.h"
#include "ir/error.h"
#include "onnx_model_builder.h"

namespace orch::frontend {
namespace {

using onnx::TensorProto;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TensorProto, RawDataRoundTripsEveryDType) {
  for (int i = 0; i < kNumDTypes; ++i) {
    auto dtype = static_cast<DType>(i);
    Tensor t(dtype, {2, 3});
    for (int64_t k = 0; k < t.numel(); ++k) t.set(k, static_cast<double>(k % 2 ? k : -k));
    TensorProto proto;
    tensor_to_proto(t, proto);
    EXPECT_EQ(proto.data_type(), onnx_from_dtype(dtype));
    EXPECT_TRUE(tensor_from_proto(proto, "").identical(t)) << dtype_name(dtype);
  }
}

// Each typed field, filled by hand, read as the expected values.
TEST(TensorProto, TypedFields) {
  struct Case {
    int onnx_type;
    DType dtype;
    std::function<void(TensorProto&)> fill;
    std::vector<double> expected;
  };
  std::vector<Case> cases = {
      {TensorProto::FLOAT,
       DType::f32,
       [](TensorProto& p) {
         p.add_float_data(1.5f);
         p.add_float_data(-2.0f);
       },
       {1.5, -2}},
      {TensorProto::DOUBLE,
       DType::f64,
       [](TensorProto& p) {
         p.add_double_data(0.1);
         p.add_double_data(1e300);
       },
       {0.1, 1e300}},
      {TensorProto::INT64,
       DType::i64,
       [](TensorProto& p) {
         p.add_int64_data(-5);
         p.add_int64_data(1ll << 40);
       },
       {-5, 1099511627776.0}},
      {TensorProto::UINT32,
       DType::u32,
       [](TensorProto& p) {
         p.add_uint64_data(4000000000u);
         p.add_uint64_data(1);
       },
       {4000000000.0, 1}},
      {TensorProto::INT8,
       DType::i8,
       [](TensorProto& p) {
         p.add_int32_data(-3);
         p.add_int32_data(127);
       },
       {-3, 127}},
      {TensorProto::UINT8,
       DType::u8,
       [](TensorProto& p) {
         p.add_int32_data(200);
         p.add_int32_data(0);
       },
       {200, 0}},
      {TensorProto::INT16,
       DType::i16,
       [](TensorProto& p) {
         p.add_int32_data(-300);
         p.add_int32_data(300);
       },
       {-300, 300}},
      {TensorProto::UINT16,
       DType::u16,
       [](TensorProto& p) {
         p.add_int32_data(60000);
         p.add_int32_data(1);
       },
       {60000, 1}},
      {TensorProto::INT32,
       DType::i32,
       [](TensorProto& p) {
         p.add_int32_data(-70000);
         p.add_int32_data(70000);
       },
       {-70000, 70000}},
      {TensorProto::BOOL,
       DType::boolean,
       [](TensorProto& p) {
         p.add_int32_data(1);
         p.add_int32_data(0);
       },
       {1, 0}},
      // 0x3C00 is 1.0 and 0xC000 is -2.0 in IEEE half.
      {TensorProto::FLOAT16,
       DType::f16,
       [](TensorProto& p) {
         p.add_int32_data(0x3C00);
         p.add_int32_data(0xC000);
       },
       {1, -2}},
      // 0x3F80 is 1.0 and 0x4040 is 3.0 in bfloat16.
      {TensorProto::BFLOAT16,
       DType::bf16,
       [](TensorProto& p) {
         p.add_int32_data(0x3F80);
         p.add_int32_data(0x4040);
       },
       {1, 3}},
  };
  for (const Case& c : cases) {
    TensorProto proto;
    proto.set_data_type(c.onnx_type);
    proto.add_dims(2);
    c.fill(proto);
    Tensor t = tensor_from_proto(proto, "");
    ASSERT_EQ(t.dtype(), c.dtype);
    EXPECT_EQ(t.to_doubles(), c.expected) << dtype_name(c.dtype);
  }
}

TEST(TensorProto, Uint64StaysExact) {
  TensorProto proto;
  proto.set_data_type(TensorProto::UINT64);
  proto.add_uint64_data(18446744073709551615ull);
  Tensor t = tensor_from_proto(proto, "");
  EXPECT_EQ(static_cast<uint64_t>(t.get_int(0)), 18446744073709551615ull);
}

TEST(TensorProto, RawDataIsSharedWithItsOwner) {
  auto proto = std::make_shared<TensorProto>();
  tensor_to_proto(Tensor::scalar(DType::f64, 2.5).reshaped({1}), *proto);
  Tensor t = tensor_from_proto(*proto, "", proto);
  EXPECT_EQ(reinterpret_cast<const char*>(t.bytes()), proto->raw_data().data());
  EXPECT_EQ(t.get(0), 2.5);
}

TEST(TensorProto, UnsupportedDTypesNameTheType) {
  for (auto [type, name] : {std::pair{TensorProto::STRING, "STRING"},
                            {TensorProto::COMPLEX64, "COMPLEX64"},
                            {TensorProto::UNDEFINED, "UNDEFINED"}}) {
    TensorProto proto;
    proto.set_name("s");
    proto.set_data_type(type);
    EXPECT_EQ(error_of([&] { tensor_from_proto(proto, ""); }),
              fmt::format("tensor 's' has data type {}, which orch does not support", name));
  }
  TensorProto proto;
  proto.set_data_type(17);
  EXPECT_EQ(error_of([&] { tensor_from_proto(proto, ""); }),
            "tensor has data type unknown (17), which orch does not support");
}

TEST(TensorProto, SizeMismatchesAreErrors) {
  TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(TensorProto::FLOAT);
  proto.add_dims(3);
  proto.set_raw_data(std::string(8, '\0'));
  EXPECT_EQ(error_of([&] { tensor_from_proto(proto, ""); }),
            "tensor 'w': raw_data has 8 bytes, f32 [3] needs 12");
  proto.clear_raw_data();
  proto.add_float_data(1);
  EXPECT_EQ(error_of([&] { tensor_from_proto(proto, ""); }), "tensor 'w': 1 values for shape [3]");
  // A corrupt dim must not allocate: 2^40 elements.
  proto.set_dims(0, int64_t{1} << 40);
  EXPECT_EQ(error_of([&] { tensor_from_proto(proto, ""); }),
            "tensor 'w': 1 values for shape [1099511627776]");
}

TEST(TensorProto, ExternalDataWithOffsetAndLength) {
  auto dir = testing::temp_dir("external_ok");
  std::vector<float> values = {0, 0, 1.5f, -2.5f};
  std::ofstream(dir / "w.bin", std::ios::binary)
      .write(reinterpret_cast<const char*>(values.data()), 16);
  TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(TensorProto::FLOAT);
  proto.add_dims(2);
  proto.set_data_location(TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair{"location", "w.bin"}, {"offset", "8"}, {"length", "8"}}) {
    auto* entry = proto.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  Tensor t = tensor_from_proto(proto, dir.string());
  EXPECT_EQ(t.to_doubles(), (std::vector<double>{1.5, -2.5}));

  proto.mutable_external_data(2)->set_value("12");
  EXPECT_EQ(error_of([&] { tensor_from_proto(proto, dir.string()); }),
            "tensor 'w': external data length 12 but f32 [2] needs 8 bytes");
  proto.mutable_external_data(0)->set_value("../w.bin");
  EXPECT_EQ(error_of([&] { tensor_from_proto(proto, dir.string()); }),
            "tensor 'w': external data location '../w.bin' leaves the model's folder");
}

TEST(TensorProto, PbFilesRoundTripAndErrorsNameTheFile) {
  auto dir = testing::temp_dir("pb_files");
  std::string path = (dir / "t.pb").string();
  Tensor t = Tensor::from_ints(DType::i64, {3}, std::vector<int64_t>{-1, 0, 1ll << 50});
  write_tensor_pb_file(t, path, "t");
  EXPECT_TRUE(read_tensor_pb_file(path).identical(t));

  std::ofstream(dir / "bad.pb") << "\xff\xff\xff";
  std::string bad = (dir / "bad.pb").string();
  EXPECT_EQ(error_of([&] { read_tensor_pb_file(bad); }),
            bad + ": not a serialized ONNX TensorProto");
  EXPECT_EQ(error_of([&] { read_tensor_pb_file((dir / "none.pb").string()); }),
            (dir / "none.pb").string() + ": cannot open file");
}

TEST(TensorProto, ReadsTheOnnxTestData) {
  std::string path = "/usr/share/libonnx-testdata/data/node/test_abs/test_data_set_0/input_0.pb";
  if (!std::ifstream(path).good()) GTEST_SKIP() << "no ONNX test data";
  Tensor t = read_tensor_pb_file(path);
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.shape(), (Shape{3, 4, 5}));
}

TEST(TensorProto, SequenceFilesAreNamedAsSuch) {
  std::string path =
      "/usr/share/libonnx-testdata/data/node/test_sequence_insert_at_back/test_data_set_0/"
      "input_0.pb";
  if (!std::ifstream(path).good()) GTEST_SKIP() << "no ONNX test data";
  EXPECT_EQ(error_of([&] { read_tensor_pb_file(path); }),
            path + ": holds a sequence, not a tensor; orch supports tensors only");
}

}  // namespace
}  // namespace orch::frontend
