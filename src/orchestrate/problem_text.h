// A plain-text form of an OrchestrationProblem, so that a benchmark can save the problems of a
// real model and a solver experiment can reload them without the compiler.
//
//   orchestration N                      N primitives
//   inputs P K I1 .. IK                  one line per primitive: its K producer primitives
//   outputs K O1 .. OK                   the graph outputs
//   candidate COST NP P1 .. NO O1 ..     one line per candidate (COST "inf": unmeasured)
#pragma once

#include <string>

#include "orchestrate/orchestrate.h"

namespace orch {

/// The problem as text (labels are left out). Costs print exactly (round-trip precision).
std::string problem_to_text(const OrchestrationProblem& problem);

/// Parses problem_to_text's output. Throws Error naming the line of a malformed input; the
/// problem itself is validated by orchestrate().
OrchestrationProblem problem_from_text(const std::string& text);

}  // namespace orch
