// Text form of an orchestration problem (problem_text.h).
#include "orchestrate/problem_text.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "ir/error.h"

namespace orch {
namespace {

void append_list(std::string& out, const std::vector<int>& ids) {
  out += fmt::format(" {}", ids.size());
  for (int id : ids) out += fmt::format(" {}", id);
}

std::vector<int> read_list(std::istringstream& in, int line) {
  int count = -1;
  in >> count;
  check(in && count >= 0, "orchestration text, line {}: expected a count", line);
  std::vector<int> ids(count);
  for (int& id : ids) {
    in >> id;
    check(static_cast<bool>(in), "orchestration text, line {}: expected {} ids", line, count);
  }
  return ids;
}

}  // namespace

std::string problem_to_text(const OrchestrationProblem& problem) {
  std::string out = fmt::format("orchestration {}\n", problem.num_primitives);
  for (int p = 0; p < problem.num_primitives; ++p) {
    out += fmt::format("inputs {}", p);
    append_list(out, problem.primitive_inputs[p]);
    out += "\n";
  }
  out += "outputs";
  append_list(out, problem.graph_outputs);
  out += "\n";
  for (const Candidate& c : problem.candidates) {
    out += std::isinf(c.cost_us) ? std::string("candidate inf")
                                 : fmt::format("candidate {}", c.cost_us);
    append_list(out, c.primitives);
    append_list(out, c.outputs);
    out += "\n";
  }
  return out;
}

OrchestrationProblem problem_from_text(const std::string& text) {
  std::istringstream lines(text);
  std::string line_text, word;
  OrchestrationProblem problem;
  int line = 0;
  while (std::getline(lines, line_text)) {
    ++line;
    std::istringstream in(line_text);
    if (!(in >> word)) continue;
    if (word == "orchestration") {
      in >> problem.num_primitives;
      check(in && problem.num_primitives >= 0,
            "orchestration text, line {}: expected the primitive count", line);
      problem.primitive_inputs.resize(problem.num_primitives);
    } else if (word == "inputs") {
      int p = -1;
      in >> p;
      check(in && p >= 0 && p < problem.num_primitives,
            "orchestration text, line {}: primitive out of range", line);
      problem.primitive_inputs[p] = read_list(in, line);
    } else if (word == "outputs") {
      problem.graph_outputs = read_list(in, line);
    } else if (word == "candidate") {
      std::string cost;
      in >> cost;
      Candidate c;
      try {
        c.cost_us = cost == "inf" ? std::numeric_limits<double>::infinity() : std::stod(cost);
      } catch (const std::exception&) {
        fail("orchestration text, line {}: '{}' is not a cost", line, cost);
      }
      c.primitives = read_list(in, line);
      c.outputs = read_list(in, line);
      problem.candidates.push_back(std::move(c));
    } else {
      fail("orchestration text, line {}: unknown entry '{}'", line, word);
    }
  }
  return problem;
}

}  // namespace orch
