#include "runtime/module_manifest.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace orch::runtime {
namespace {

using nlohmann::json;

// Tensor's own limit on bytes (tensor.cc), so that every type the manifest declares can be
// allocated and its byte count computed without overflow.
constexpr int64_t kMaxBytes = int64_t{1} << 62;

// Reads manifest fields with errors that name the manifest and the field.
class Reader {
 public:
  explicit Reader(const std::string& path) : path_(path) {}

  const json& field(const json& object, const char* name) const {
    check(object.is_object() && object.contains(name), "{}: missing field '{}'", path_, name);
    return object.at(name);
  }

  std::string text(const json& object, const char* name) const {
    const json& v = field(object, name);
    check(v.is_string(), "{}: field '{}' has the wrong type", path_, name);
    return v.get<std::string>();
  }

  bool boolean(const json& object, const char* name) const {
    const json& v = field(object, name);
    check(v.is_boolean(), "{}: field '{}' has the wrong type", path_, name);
    return v.get<bool>();
  }

  // JSON integers only: a float (1e300) would be undefined behaviour to convert.
  int64_t number(const json& v, const char* name, int64_t lo, int64_t hi) const {
    check(v.is_number_integer(), "{}: field '{}' has the wrong type", path_, name);
    // The parser stores non-negative integers as unsigned: both bounds apply to them too.
    bool fits = v.is_number_unsigned()
                    ? v.get<uint64_t>() <= static_cast<uint64_t>(hi) &&
                          (lo <= 0 || v.get<uint64_t>() >= static_cast<uint64_t>(lo))
                    : v.get<int64_t>() >= lo && v.get<int64_t>() <= hi;
    check(fits, "{}: field '{}' is out of range [{}, {}]", path_, name, lo, hi);
    return v.get<int64_t>();
  }

  int64_t integer(const json& object, const char* name, int64_t lo = 0,
                  int64_t hi = kMaxBytes) const {
    return number(field(object, name), name, lo, hi);
  }

  const json& array(const json& object, const char* name) const {
    check(object.is_object() && object.contains(name) && object.at(name).is_array(),
          "{}: missing array '{}'", path_, name);
    return object.at(name);
  }

  TensorType type(const json& object) const {
    std::string name = text(object, "dtype");
    std::optional<DType> dtype = parse_dtype(name);
    check(dtype.has_value(), "{}: unknown dtype '{}'", path_, name);
    Shape shape;
    for (const json& d : array(object, "shape")) shape.push_back(number(d, "shape", 0, kMaxBytes));
    TensorType type{*dtype, shape};
    bytes(type);
    return type;
  }

  // The type's bytes; an Error when they exceed kMaxBytes.
  int64_t bytes(const TensorType& type) const {
    int64_t n = static_cast<int64_t>(dtype_size(type.dtype));
    for (int64_t d : type.shape) {
      check(d == 0 || n <= kMaxBytes / d, "{}: shape {} is too large", path_,
            format_shape(type.shape));
      n *= d;
    }
    return n;
  }

  Location location(const json& object) const {
    std::string region = text(object, "region");
    Location at;
    at.bytes = integer(object, "bytes");
    if (region == "input" || region == "output") {
      at.region = region == "input" ? Region::input : Region::output;
      at.index = static_cast<int>(integer(object, "index", 0, std::numeric_limits<int>::max()));
    } else {
      check(region == "arena" || region == "weights", "{}: unknown region '{}'", path_, region);
      at.region = region == "arena" ? Region::arena : Region::weights;
      at.offset = integer(object, "offset");
    }
    return at;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<KernelValue> kernel_values(const Reader& r, const json& list) {
  std::vector<KernelValue> values;
  for (const json& v : list) {
    KernelValue kv{r.text(v, "value"), r.type(v), r.location(v)};
    if (v.contains("channel_block")) {
      kv.channel_block = r.integer(v, "channel_block", 1, 64);
      const Shape& shape = kv.type.shape;
      check(shape.size() >= 3 && shape[1] % kv.channel_block == 0,
            "{}: value '{}' of shape {} cannot be stored in channel blocks of {}", r.path(),
            kv.value, format_shape(shape), kv.channel_block);
    }
    values.push_back(std::move(kv));
  }
  return values;
}

// [offset, offset + bytes) inside [0, size), written so that nothing overflows.
bool inside(int64_t offset, int64_t bytes, int64_t size) {
  return offset >= 0 && bytes >= 0 && bytes <= size && offset <= size - bytes;
}

// Every location inside its region and as large as its value, so that a damaged manifest
// cannot send a kernel or a hook outside the buffers.
void check_locations(const Reader& r, const ModuleLayout& layout, const std::string& what,
                     const std::vector<KernelValue>& values) {
  for (const KernelValue& kv : values) {
    const Location& at = kv.at;
    bool ok = at.bytes == r.bytes(kv.type);
    if (at.region == Region::arena) ok &= inside(at.offset, at.bytes, layout.arena_bytes);
    if (at.region == Region::weights) ok &= inside(at.offset, at.bytes, layout.weights_bytes);
    if (at.region == Region::input)
      ok &= at.index < static_cast<int>(layout.inputs.size()) &&
            layout.inputs[at.index].type == kv.type;
    if (at.region == Region::output)
      ok &= at.index < static_cast<int>(layout.outputs.size()) &&
            layout.outputs[at.index].type == kv.type;
    check(ok, "{}: {}: value '{}' lies outside its region", r.path(), what, kv.value);
  }
}

ExternalSpec external_spec(const Reader& r, const json& k, const ModuleLayout& layout) {
  std::string backend = r.text(k, "backend");
  check(backend == "dnnl" || backend == "reference", "{}: kernel {} has unknown backend '{}'",
        r.path(), r.text(k, "name"), backend);
  // "config" may be absent: the backend's default configuration.
  ExternalSpec spec{r.text(k, "graph"), k.contains("config") ? r.text(k, "config") : "", {}};
  for (const json& w : r.array(k, "weights")) {
    WeightBinding b{r.text(w, "value"), r.integer(w, "offset"), r.integer(w, "bytes")};
    check(inside(b.offset, b.bytes, layout.weights_bytes), "{}: weight '{}' lies outside {}",
          r.path(), b.value, kWeightsFile);
    spec.weights.push_back(std::move(b));
  }
  return spec;
}

// The types of a library call's values (cuBLAS and cuDNN read them dense, in their row-major
// layout, never channel-blocked).
std::vector<TensorType> library_types(const Reader& r, const std::vector<KernelValue>& values,
                                      const std::string& kernel) {
  std::vector<TensorType> types;
  for (const KernelValue& v : values) {
    check(v.channel_block == 0, "{}: kernel {} calls a library on a channel-blocked value",
          r.path(), kernel);
    types.push_back(v.type);
  }
  return types;
}

// A "gemm" launch: its extents and operands, which must fit the kernel's values.
codegen::GemmSpec gemm_spec(const Reader& r, const json& g, const std::string& kernel,
                            const std::vector<KernelValue>& inputs,
                            const std::vector<KernelValue>& outputs) {
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  codegen::GemmSpec s{r.integer(g, "batch", 1, kIntMax),
                      r.integer(g, "m", 1, kIntMax),
                      r.integer(g, "n", 1, kIntMax),
                      r.integer(g, "k", 1, kIntMax),
                      r.boolean(g, "trans_a"),
                      r.boolean(g, "trans_b"),
                      static_cast<int>(r.integer(g, "a", 0, kIntMax)),
                      static_cast<int>(r.integer(g, "b", 0, kIntMax))};
  std::string why = codegen::gemm_mismatch(s, library_types(r, inputs, kernel),
                                           library_types(r, outputs, kernel));
  check(why.empty(), "{}: kernel {}'s GEMM does not fit its values: {}", r.path(), kernel, why);
  return s;
}

// A "conv" launch: its geometry and operands, which must fit the kernel's values.
codegen::ConvSpec conv_spec(const Reader& r, const json& c, const std::string& kernel,
                            const std::vector<KernelValue>& inputs,
                            const std::vector<KernelValue>& outputs) {
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  auto ints = [&](const char* name) {
    std::vector<int64_t> v;
    for (const json& e : r.array(c, name)) v.push_back(r.number(e, name, 0, kIntMax));
    return v;
  };
  codegen::ConvSpec s{ints("pads"),
                      ints("strides"),
                      ints("dilations"),
                      r.integer(c, "group", 1, kIntMax),
                      static_cast<int>(r.integer(c, "x", 0, kIntMax)),
                      static_cast<int>(r.integer(c, "w", 0, kIntMax)),
                      static_cast<int>(r.integer(c, "bias", -1, kIntMax)),
                      r.boolean(c, "relu")};
  std::string why = codegen::conv_mismatch(s, library_types(r, inputs, kernel),
                                           library_types(r, outputs, kernel));
  check(why.empty(), "{}: kernel {}'s convolution does not fit its values: {}", r.path(), kernel,
        why);
  return s;
}

// A CUDA kernel's launches: at least one, each within CUDA's grid and block limits; or one
// library call (a GEMM or a convolution).
std::vector<LaunchSpec> launch_specs(const Reader& r, const json& k,
                                     const std::vector<KernelValue>& inputs,
                                     const std::vector<KernelValue>& outputs) {
  std::string name = r.text(k, "name");
  std::vector<LaunchSpec> launches;
  for (const json& l : r.array(k, "launches")) {
    if (l.is_object() && l.contains("gemm")) {
      launches.push_back({.gemm = gemm_spec(r, l.at("gemm"), name, inputs, outputs)});
      continue;
    }
    if (l.is_object() && l.contains("conv")) {
      launches.push_back({.conv = conv_spec(r, l.at("conv"), name, inputs, outputs)});
      continue;
    }
    launches.push_back({r.text(l, "function"), r.integer(l, "blocks", 1, (int64_t{1} << 31) - 1),
                        static_cast<int>(r.integer(l, "threads", 1, 1024)),
                        r.integer(l, "shared_bytes", 0, (int64_t{1} << 31) - 1)});
  }
  check(!launches.empty(), "{}: CUDA kernel {} has no launches", r.path(), name);
  bool library = std::any_of(launches.begin(), launches.end(), [](const LaunchSpec& l) {
    return l.gemm.has_value() || l.conv.has_value();
  });
  check(!library || launches.size() == 1,
        "{}: CUDA kernel {} has a library call among other launches", r.path(), name);
  return launches;
}

}  // namespace

ModuleLayout parse_manifest(std::string_view text, const std::string& path) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
  check(root.is_object(), "{}: not a JSON object", path);
  Reader r(path);
  std::string format = r.text(root, "format");
  check(format == kManifestFormat || format == kCudaManifestFormat,
        "{}: not an orch module manifest", path);
  bool cuda = format == kCudaManifestFormat;
  int64_t version = r.integer(root, "version", std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max());
  check(version == kManifestVersion, "{}: manifest version {}, this runtime reads {}", path,
        version, kManifestVersion);
  ModuleLayout layout;
  layout.arena_bytes = r.integer(root, "arena_bytes");
  layout.cuda = cuda;
  if (cuda) {
    layout.target = r.text(root, "target");
    int arch = 0, end = 0;
    check(std::sscanf(layout.target.c_str(), "sm_%d%n", &arch, &end) == 1 &&
              end == static_cast<int>(layout.target.size()) && arch > 0,
          "{}: target '{}' is not an sm_<N> architecture", path, layout.target);
    layout.scratch_bytes = r.integer(root, "scratch_bytes");
  }
  layout.weights_bytes = r.integer(root, "weights_bytes");
  for (const json& in : r.array(root, "inputs"))
    layout.inputs.push_back({r.text(in, "name"), r.type(in)});
  for (const json& out : r.array(root, "outputs")) {
    layout.outputs.push_back({r.text(out, "name"), r.type(out)});
    layout.output_copy_from.push_back(
        out.contains("copy_from") ? std::optional(r.location(out.at("copy_from"))) : std::nullopt);
  }
  for (size_t i = 0; i < layout.outputs.size(); ++i)
    if (layout.output_copy_from[i])
      check_locations(
          r, layout, "output " + layout.outputs[i].name,
          {{layout.outputs[i].name, layout.outputs[i].type, *layout.output_copy_from[i]}});
  layout.weights_file = r.text(root, "weights");
  for (const json& k : r.array(root, "kernels")) {
    KernelSpec spec{r.text(k, "name"), r.text(k, "backend"), "", {}};
    // Informational (profiles print it): a missing or non-numeric cost is not an error.
    if (k.contains("cost_us") && k.at("cost_us").is_number())
      spec.planned_us = k.at("cost_us").get<double>();
    std::vector<std::string> prims;
    for (const json& p : r.array(k, "primitives"))
      prims.push_back(fmt::format("{} {}", r.text(p, "op"), r.text(p, "node")));
    spec.primitives = fmt::format("{}", fmt::join(prims, " + "));
    layout.kernel_inputs.push_back(kernel_values(r, r.array(k, "inputs")));
    layout.kernel_outputs.push_back(kernel_values(r, r.array(k, "outputs")));
    check_locations(r, layout, "kernel " + spec.name, layout.kernel_inputs.back());
    check_locations(r, layout, "kernel " + spec.name, layout.kernel_outputs.back());
    for (const KernelValue& kv : layout.kernel_outputs.back())
      spec.outputs.push_back({kv.value, kv.type});
    // A CUDA module's kernel launches on the GPU, or (an op the generator lacks) runs on the
    // host through the reference backend, external like a CPU module's.
    bool on_host = cuda && spec.backend == "reference" && r.boolean(k, "external");
    if (cuda && !on_host) {
      check((spec.backend == "cuda" || spec.backend == "cublas" || spec.backend == "cudnn") &&
                !r.boolean(k, "external"),
            "{}: kernel {} of a CUDA module has backend '{}'", path, spec.name, spec.backend);
      layout.launches.push_back(
          launch_specs(r, k, layout.kernel_inputs.back(), layout.kernel_outputs.back()));
      check(r.integer(k, "scratch_bytes") <= layout.scratch_bytes,
            "{}: kernel {} uses more scratch than the module has", path, spec.name);
    }
    if (on_host) layout.launches.emplace_back();
    layout.kernels.push_back(std::move(spec));
    layout.external.push_back(r.boolean(k, "external") ? std::optional(external_spec(r, k, layout))
                                                       : std::nullopt);
  }
  check(layout.kernels.size() <= static_cast<size_t>(std::numeric_limits<int>::max()),
        "{}: too many kernels", path);
  layout.library_file = r.text(root, "library");
  return layout;
}

}  // namespace orch::runtime
