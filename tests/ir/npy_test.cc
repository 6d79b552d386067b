#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ir/error.h"
#include "ir/npy.h"

namespace orch {
namespace {

TEST(Npy, RoundTripsEveryNumpyDtype) {
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::i8, DType::u8, DType::i16, DType::u16,
                  DType::i32, DType::u32, DType::i64, DType::u64, DType::boolean}) {
    for (Shape shape : {Shape{}, Shape{3}, Shape{2, 0}, Shape{2, 3, 1}}) {
      Tensor a(t, shape);
      for (int64_t i = 0; i < a.numel(); ++i) a.set(i, static_cast<double>(i % 2));
      Tensor b = parse_npy(serialize_npy(a), "mem");
      EXPECT_TRUE(a.identical(b)) << dtype_name(t) << format_shape(shape);
    }
  }
}

TEST(Npy, ReadsWhatNumpyWrites) {
  // Written by numpy 1.24: np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3)).
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append(118 - header.size() - 1, ' ');
  header += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) + char(118) + char(0) + header;
  for (float v : {0.f, 1.f, 2.f, 3.f, 4.f, 5.f}) bytes.append(reinterpret_cast<char*>(&v), 4);
  Tensor t = parse_npy(bytes, "mem");
  EXPECT_EQ(t.shape(), (Shape{2, 3}));
  EXPECT_EQ(t.get(5), 5.0);
}

TEST(Npy, BadInputIsAClearError) {
  try {
    parse_npy("not numpy at all", "x.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "'x.npy' is not a .npy file (bad magic)");
  }
  std::string good = serialize_npy(Tensor(DType::f32, {4}));
  try {
    parse_npy(good.substr(0, good.size() - 3), "x.npy");
    FAIL();
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "'x.npy' is truncated: 13 data bytes, need 16");
  }
  EXPECT_THROW(read_npy_file("/nonexistent/file.npy"), Error);
}

}  // namespace
}  // namespace orch
