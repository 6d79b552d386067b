#include "fission/samples.h"

#include "ir/builder.h"

namespace orch::fission::sample {

Graph make(const std::string& op, const std::vector<Arg>& args, Attributes attrs, int num_outputs) {
  Graph g;
  Builder b(g);
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    const Arg& a = args[i];
    if (a.absent)
      inputs.push_back(kNoValue);
    else if (a.constant.defined())
      inputs.push_back(b.constant(a.constant, "c" + std::to_string(i)));
    else
      inputs.push_back(b.input("x" + std::to_string(i), a.type));
  }
  for (ValueId v : b.op_multi(op, inputs, std::move(attrs), num_outputs)) b.output(v);
  return g;
}

int64_t integer(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

bool coin(Rng& rng) {
  return integer(rng, 0, 1) == 1;
}

Shape shape(Rng& rng, int min_rank, int max_rank, int64_t max_dim) {
  Shape s(integer(rng, min_rank, max_rank));
  for (int64_t& d : s) d = integer(rng, 1, max_dim);
  return s;
}

Shape broadcastable(Rng& rng, const Shape& s) {
  Shape out(s.begin() + integer(rng, 0, static_cast<int64_t>(s.size())), s.end());
  for (int64_t& d : out)
    if (integer(rng, 0, 2) == 0) d = 1;
  return out;
}

int64_t axis(Rng& rng, int64_t rank) {
  int64_t a = integer(rng, 0, rank - 1);
  return coin(rng) ? a - rank : a;
}

Tensor ints(const std::vector<int64_t>& values) {
  return Tensor::from_ints(DType::i64, {static_cast<int64_t>(values.size())}, values);
}

Tensor floats(Rng& rng, const Shape& s, double lo, double hi) {
  std::vector<double> v(num_elements(s));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (double& x : v) x = dist(rng);
  return Tensor::from_doubles(DType::f32, s, v);
}

DType float_type(Rng& rng) {
  return integer(rng, 0, 5) == 0 ? DType::f64 : DType::f32;
}

}  // namespace orch::fission::sample
