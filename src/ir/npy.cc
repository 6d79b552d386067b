#include "ir/npy.h"

#include <charconv>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

#include "ir/error.h"

namespace orch {
namespace {

struct NpyType {
  DType dtype;
  std::string_view descr;
};

// bf16 is absent: NumPy has no such type.
constexpr NpyType kTypes[] = {
    {DType::f32, "<f4"}, {DType::f64, "<f8"}, {DType::f16, "<f2"}, {DType::i8, "|i1"},
    {DType::u8, "|u1"},  {DType::i16, "<i2"}, {DType::u16, "<u2"}, {DType::i32, "<i4"},
    {DType::u32, "<u4"}, {DType::i64, "<i8"}, {DType::u64, "<u8"}, {DType::boolean, "|b1"},
};

constexpr std::string_view kMagic = "\x93NUMPY";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "cannot open '{}'", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Tensor parse_npy(const std::string& bytes, const std::string& what) {
  check(bytes.size() >= 10 && std::string_view(bytes).substr(0, 6) == kMagic,
        "'{}' is not a .npy file (bad magic)", what);
  int major = static_cast<unsigned char>(bytes[6]);
  check(major >= 1 && major <= 3, "'{}': unsupported .npy version {}", what, major);
  size_t len_bytes = major == 1 ? 2 : 4;
  check(bytes.size() >= 8 + len_bytes, "'{}' is truncated", what);
  size_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i)
    header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
  // NumPy itself refuses headers over 10000 bytes (np.load's max_header_size).
  check(header_len <= 10000, "'{}': .npy header of {} bytes is too long", what, header_len);
  size_t data_start = 8 + len_bytes + header_len;
  check(data_start <= bytes.size(), "'{}' is truncated (header)", what);
  std::string header = bytes.substr(8 + len_bytes, header_len);

  std::smatch m;
  check(std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")),
        "'{}': header has no descr", what);
  std::string descr = m[1];
  check(std::regex_search(header, m, std::regex(R"('fortran_order'\s*:\s*(True|False))")),
        "'{}': header has no fortran_order", what);
  if (m[1] == "True") unsupported("'{}': Fortran-order arrays are not supported", what);
  check(std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(([^)]*)\))")),
        "'{}': header has no shape", what);
  Shape shape;
  std::string dims = m[1];
  static const std::regex kDim(R"(\d+)");
  for (auto it = std::sregex_iterator(dims.begin(), dims.end(), kDim); it != std::sregex_iterator();
       ++it) {
    std::string digits = it->str();
    int64_t d = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d);
    check(ec == std::errc(), "'{}': dim '{}' is too large", what, digits);
    shape.push_back(d);
  }

  const NpyType* type = nullptr;
  for (const NpyType& t : kTypes)
    if (t.descr == descr ||
        (t.descr[0] == '|' && !descr.empty() && descr.substr(1) == t.descr.substr(1)))
      type = &t;
  if (type == nullptr) unsupported("'{}': unsupported .npy dtype '{}'", what, descr);
  // The data must be present before the tensor is allocated: a corrupt shape must not ask for
  // terabytes.
  int64_t numel = 0;
  try {
    numel = num_elements(shape);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("'{}'", what));
  }
  auto available = static_cast<int64_t>(bytes.size() - data_start);
  auto size = static_cast<int64_t>(dtype_size(type->dtype));
  check(numel <= available / size, "'{}' is truncated: {} data bytes, need {}", what, available,
        numel <= INT64_MAX / size ? fmt::format("{}", numel * size)
                                  : fmt::format("{} x {}", numel, size));
  Tensor t(type->dtype, shape);
  if (t.nbytes() > 0) std::memcpy(t.mutable_bytes(), bytes.data() + data_start, t.nbytes());
  return t;
}

Tensor read_npy_file(const std::string& path) {
  return parse_npy(read_file(path), path);
}

std::string serialize_npy(const Tensor& tensor) {
  const NpyType* type = nullptr;
  for (const NpyType& t : kTypes)
    if (t.dtype == tensor.dtype()) type = &t;
  if (type == nullptr)
    unsupported("{} tensors cannot be written as .npy", dtype_name(tensor.dtype()));
  std::string dims;
  for (int64_t d : tensor.shape()) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
  if (tensor.rank() == 1) dims += ",";  // Python's one-element tuple
  std::string header = "{'descr': '" + std::string(type->descr) +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad so that the data starts at a multiple of 64 bytes, ending the header with '\n'.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(tensor.bytes()), tensor.nbytes());
  return out;
}

void write_npy_file(const Tensor& tensor, const std::string& path) {
  std::string bytes = serialize_npy(tensor);
  std::ofstream out(path, std::ios::binary);
  check(out.good(), "cannot write '{}'", path);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  check(out.good(), "cannot write '{}'", path);
}

}  // namespace orch
