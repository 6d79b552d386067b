#include "rewrite/patch.h"

#include <numeric>
#include <unordered_set>

#include "ir/error.h"
#include "ir/op_registry.h"

namespace orch::rewrite {

Ref Patch::constant(Tensor data) {
  TensorType type{data.dtype(), data.shape()};
  new_.push_back({std::move(type), std::move(data), "", {}, {}});
  return -static_cast<Ref>(new_.size());
}

Ref Patch::op(const std::string& op, std::vector<Ref> inputs, Attributes attrs) {
  const OpSchema* schema = find_op(op);
  check(schema != nullptr && schema->infer != nullptr, "patch: unknown op '{}'", op);
  auto n = static_cast<int>(inputs.size());
  check(n >= schema->min_inputs && n <= schema->max_inputs, "patch: {} takes {} to {} inputs", op,
        schema->min_inputs, schema->max_inputs);
  InferInput in{attrs, {}, {}, 1};
  for (Ref r : inputs) {
    in.types.emplace_back(type(r));
    in.values.push_back(constant_of(r));
  }
  std::vector<TensorType> types;
  try {
    types = schema->infer(in);
  } catch (const Error& e) {
    rethrow_with_context(e, fmt::format("patch: {}", op));
  }
  new_.push_back({types.at(0), {}, op, std::move(inputs), std::move(attrs)});
  return -static_cast<Ref>(new_.size());
}

void Patch::replace(ValueId old, Ref with) {
  check(graph_.value(old).type == type(with), "patch: '{}' is {}, its replacement {}",
        graph_.value(old).name, format_type(graph_.value(old).type), format_type(type(with)));
  replacements_.emplace_back(old, with);
}

const TensorType& Patch::type(Ref r) const {
  return r >= 0 ? graph_.value(r).type : new_.at(-r - 1).type;
}

const Tensor* Patch::constant_of(Ref r) const {
  if (r >= 0) return graph_.value(r).is_constant() ? &graph_.value(r).constant : nullptr;
  const Tensor& t = new_.at(-r - 1).constant;
  return t.defined() ? &t : nullptr;
}

namespace {

// Rebuilds a graph from its old nodes and a patch's new values. A "slot" numbers both: old
// value v is slot v, new value i is slot num_values + i.
class Rebuild {
 public:
  Rebuild(const Graph& graph, const Patch& patch)
      : g_(graph), p_(patch), nv_(static_cast<int>(graph.num_values())) {
    subst_.resize(graph.num_values());
    std::iota(subst_.begin(), subst_.end(), 0);
    for (const auto& [old, with] : patch.replacements()) subst_[old] = with;
    size_t slots = graph.num_values() + patch.new_values().size();
    live_.assign(slots, false);
    emitted_.assign(slots, kNoValue);
    names_.resize(slots);
    node_state_.assign(graph.num_nodes(), 0);
    new_state_.assign(patch.new_values().size(), 0);
  }

  std::optional<Graph> run() {
    std::vector<Ref> outputs;
    for (ValueId o : g_.outputs()) {
      std::optional<Ref> r = resolve(o);
      if (!r) return std::nullopt;
      outputs.push_back(*r);
    }
    mark_live(outputs);
    if (!name_outputs(outputs)) return std::nullopt;
    out_.name = g_.name;
    for (ValueId in : g_.inputs()) emitted_[in] = out_.add_input(name(in), g_.value(in).type);
    for (ValueId v = 0; v < nv_; ++v)
      if (g_.value(v).is_constant() && live_[v])
        emitted_[v] = out_.add_constant(name(v), g_.value(v).constant);
    for (NodeId n = 0; n < static_cast<NodeId>(g_.num_nodes()); ++n)
      if (node_live(n) && !emit_node(n)) return std::nullopt;
    std::vector<ValueId> result;
    for (Ref r : outputs) {
      if (!emit(slot(r))) return std::nullopt;
      result.push_back(emitted_[slot(r)]);
    }
    out_.set_outputs(std::move(result));
    return std::move(out_);
  }

 private:
  int slot(Ref r) const { return r >= 0 ? r : nv_ + (-r - 1); }

  // Follows replacements of old values (a replacement may itself be replaced).
  std::optional<Ref> resolve(Ref r) const {
    for (int steps = 0; r >= 0 && subst_[r] != r; ++steps) {
      if (steps > nv_) return std::nullopt;
      r = subst_[r];
    }
    return r;
  }

  // The slots a slot reads: an old value its producer's (replaced) inputs, a new value its own.
  template <typename F>
  bool for_each_input(int s, F&& f) const {
    if (s < nv_) {
      NodeId n = g_.value(s).producer;
      if (n == kNoNode) return true;
      for (ValueId in : g_.node(n).inputs) {
        if (in == kNoValue) continue;
        std::optional<Ref> r = resolve(in);
        if (!r || !f(slot(*r))) return false;
      }
      return true;
    }
    for (Ref in : p_.new_values()[s - nv_].inputs)
      if (!f(slot(in))) return false;
    return true;
  }

  void mark_live(const std::vector<Ref>& outputs) {
    std::vector<int> stack;
    for (Ref r : outputs) stack.push_back(slot(r));
    while (!stack.empty()) {
      int s = stack.back();
      stack.pop_back();
      if (live_[s]) continue;
      live_[s] = true;
      // An old value keeps its whole producer (all its outputs) alive.
      if (s < nv_ && g_.value(s).producer != kNoNode)
        for (ValueId o : g_.node(g_.value(s).producer).outputs) live_[o] = true;
      for_each_input(s, [&](int in) {
        if (!live_[in]) stack.push_back(in);
        return true;
      });
    }
  }

  bool node_live(NodeId n) const {
    for (ValueId o : g_.node(n).outputs)
      if (live_[o]) return true;
    return false;
  }

  // A replaced graph output gives its name to its replacement, which must be free to take it.
  bool name_outputs(const std::vector<Ref>& outputs) {
    std::unordered_set<ValueId> kept;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i] == g_.outputs()[i]) kept.insert(outputs[i]);
    for (size_t i = 0; i < outputs.size(); ++i) {
      ValueId o = g_.outputs()[i];
      Ref r = outputs[i];
      if (r == o) continue;
      const std::string& wanted = g_.value(o).name;
      if (live_[o] || (r >= 0 && (kept.contains(r) || g_.value(r).producer == kNoNode)))
        return false;
      std::string& name = names_[slot(r)];
      if (!name.empty() && name != wanted) return false;
      name = wanted;
    }
    return true;
  }

  std::string name(int s) {
    if (!names_[s].empty()) return names_[s];
    if (s < nv_) return g_.value(s).name;
    std::string name;
    do {
      name = fmt::format("rw{}", next_name_++);
    } while (g_.find_value(name) != kNoValue || out_.find_value(name) != kNoValue);
    return name;
  }

  bool emit(int s) {
    if (emitted_[s] != kNoValue) return true;
    if (s < nv_) return emit_node(g_.value(s).producer);
    int i = s - nv_;
    if (new_state_[i] == 1) return false;  // a cycle
    new_state_[i] = 1;
    const Patch::NewValue& v = p_.new_values()[i];
    if (v.constant.defined()) {
      emitted_[s] = out_.add_constant(name(s), v.constant);
      return true;
    }
    std::vector<ValueId> inputs;
    for (Ref in : v.inputs) {
      if (!emit(slot(in))) return false;
      inputs.push_back(emitted_[slot(in)]);
    }
    NodeId n = out_.add_node(v.op, std::move(inputs), v.attrs, {name(s)}, {v.type});
    emitted_[s] = out_.node(n).outputs[0];
    return true;
  }

  bool emit_node(NodeId n) {
    if (node_state_[n] == 2) return true;
    if (node_state_[n] == 1) return false;  // a cycle
    node_state_[n] = 1;
    const Node& node = g_.node(n);
    std::vector<ValueId> inputs;
    for (ValueId in : node.inputs) {
      if (in == kNoValue) {
        inputs.push_back(kNoValue);
        continue;
      }
      int s = slot(*resolve(in));
      if (!emit(s)) return false;
      inputs.push_back(emitted_[s]);
    }
    std::vector<std::string> names;
    std::vector<TensorType> types;
    for (ValueId o : node.outputs) {
      names.push_back(name(o));
      types.push_back(g_.value(o).type);
    }
    NodeId copy = out_.add_node(node.op, std::move(inputs), node.attrs, std::move(names),
                                std::move(types), node.name);
    for (size_t i = 0; i < node.outputs.size(); ++i)
      emitted_[node.outputs[i]] = out_.node(copy).outputs[i];
    node_state_[n] = 2;
    return true;
  }

  const Graph& g_;
  const Patch& p_;
  int nv_;
  std::vector<Ref> subst_;
  std::vector<bool> live_;
  std::vector<ValueId> emitted_;
  std::vector<std::string> names_;
  std::vector<char> node_state_, new_state_;
  Graph out_;
  int64_t next_name_ = 0;
};

}  // namespace

std::optional<Graph> apply_patch(const Graph& graph, const Patch& patch) {
  return Rebuild(graph, patch).run();
}

}  // namespace orch::rewrite
