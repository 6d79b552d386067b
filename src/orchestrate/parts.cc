// Independent parts of an orchestration problem (columns.h: independent_parts).
#include <algorithm>
#include <numeric>

#include "orchestrate/columns.h"

namespace orch::orchestrate_detail {
namespace {

int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

std::vector<Part> whole(const OrchestrationProblem& problem) {
  Part part{.problem = problem, .candidates = std::vector<int>(problem.candidates.size())};
  std::iota(part.candidates.begin(), part.candidates.end(), 0);
  return {std::move(part)};
}

}  // namespace

std::vector<Part> independent_parts(const OrchestrationProblem& problem) {
  const int n = problem.num_primitives;
  std::vector<int> parent(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (const Candidate& c : problem.candidates)
    for (int p : c.primitives) parent[find_root(parent, p)] = find_root(parent, c.primitives[0]);

  // Parts numbered in the order of their first primitive; local primitive numbers in order.
  std::vector<int> part_of(n), local(n), root_part(n, -1);
  std::vector<Part> parts;
  for (int p = 0; p < n; ++p) {
    int& part = root_part[find_root(parent, p)];
    if (part < 0) {
      part = static_cast<int>(parts.size());
      parts.emplace_back();
    }
    part_of[p] = part;
    local[p] = parts[part].problem.num_primitives++;
  }
  if (parts.size() <= 1) return whole(problem);

  // Values needed by the outputs: only their reads force a write across parts.
  std::vector<char> needed(n, 0);
  std::vector<int> stack(problem.graph_outputs.begin(), problem.graph_outputs.end());
  while (!stack.empty()) {
    int p = stack.back();
    stack.pop_back();
    if (needed[p]) continue;
    needed[p] = 1;
    for (int q : problem.primitive_inputs[p]) stack.push_back(q);
  }
  std::vector<std::vector<char>> is_output(parts.size());
  for (Part& part : parts) {
    part.problem.primitive_inputs.resize(part.problem.num_primitives);
    is_output[&part - parts.data()].assign(part.problem.num_primitives, 0);
  }
  for (int p = 0; p < n; ++p) {
    for (int q : problem.primitive_inputs[p]) {
      if (part_of[q] == part_of[p]) {
        parts[part_of[p]].problem.primitive_inputs[local[p]].push_back(local[q]);
      } else if (part_of[q] > part_of[p]) {
        return whole(problem);  // a part reads a later one: their plans could wait on each other
      } else if (needed[p]) {
        is_output[part_of[q]][local[q]] = 1;
      }
    }
  }
  for (int g : problem.graph_outputs) is_output[part_of[g]][local[g]] = 1;
  for (size_t i = 0; i < parts.size(); ++i)
    for (int p = 0; p < parts[i].problem.num_primitives; ++p)
      if (is_output[i][p]) parts[i].problem.graph_outputs.push_back(p);

  for (int c = 0; c < static_cast<int>(problem.candidates.size()); ++c) {
    const Candidate& candidate = problem.candidates[c];
    Part& part = parts[part_of[candidate.primitives[0]]];
    Candidate copy = candidate;
    for (int& p : copy.primitives) p = local[p];
    for (int& p : copy.outputs) p = local[p];
    part.problem.candidates.push_back(std::move(copy));
    part.candidates.push_back(c);
  }
  return parts;
}

}  // namespace orch::orchestrate_detail
