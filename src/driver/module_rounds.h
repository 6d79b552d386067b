// Module rounds: the plan timed where it runs, inside its module, and planned again over those
// times.
//
// Tuning measures each kernel alone, many times over the same buffers, so its code and the data
// it reads and writes stay in the caches. Inside a module its neighbours have moved other code
// and data through them, and a plan of small kernels passing large intermediates pays for it.
// YOLOX-Nano at one thread: the tuned plan ran the stem as a convolution (1525 us alone), a SiLU
// kernel (197) and a depthwise convolution with its SiLU (215), 1937 us together against 1964 for
// the chained stem kernel plus a small SiLU kernel; in the module the three took 1903, 225 and
// 408 us, while the chain and its SiLU, built as a module of their own, took 1858.
//
// So `orch optimize --module-rounds N` builds the tuned plan's module, times every kernel in it,
// replaces those kernels' costs (at their place in the graph) with their times in the module,
// solves the BLP again, and builds and times the new plan, for a few rounds. Last, the modules
// built are timed again in turns and the fastest one is kept: a round does not make the module
// slower than the tuned plan's beyond the noise of timing. It is off by default; what it bought on
// this 2-core machine (session 23, one thread): the kept module 0.7% and 1.3% faster than the tuned
// plan's on YOLOX-Nano (two runs), 0.5% on EfficientViT-B1: within the noise, for 50 to 110 s of
// stitching and timing.
//
// Last of the rounds, unless the stitch options relay them out already, the plan whose module ran
// fastest is built once more with its convolutions relaid out (blocked_layout.h), and timed with
// the others: the kept module is the faster of the two layouts, model by model.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "driver/tune.h"
#include "orchestrate/orchestrate.h"
#include "stitch/stitch.h"

namespace orch::driver {

struct ModuleRoundsOptions {
  int rounds = 3;        // modules built at most (the tuned plan's is the first)
  int threads = 0;       // kernel threads while timing; 0: one per core
  int repeat = 20;       // timed runs of each module per timing
  double budget_s = 5;   // and no more runs started after this many seconds of them
  int final_passes = 3;  // turns of timing every module built, to choose between them
  uint64_t seed = 1;     // of the random inputs the modules run on
  stitch::StitchOptions stitch;
  OrchestrateOptions solve;
  std::function<void(std::string_view)> log;  // null: silent
};

/// A module built in one round.
struct ModuleRound {
  int kernels = 0;
  int new_kernels = 0;      // kernels no earlier round's module had
  double objective_us = 0;  // the plan's BLP objective over the costs it was chosen with
  double run_us = 0;        // median whole run in its own round
  double final_run_us = 0;  // median whole run over the final passes
  bool relaid_out = false;  // an earlier round's plan, its convolutions relaid out
};

struct InModulePlan {
  Plan plan;                      // the plan of the fastest module, at its kernels' tuned costs
  std::string dir;                // its module, stitched (not validated): the caller's to install
  stitch::StitchResult stitched;  // its stitch result
  std::vector<ModuleRound> rounds;
  int chosen = 0;  // index into rounds
};

/// `tuned` with the candidates in `in_module` (candidate index -> its time in a module) at that
/// time, and every other one at its tuned cost scaled by how much slower the kernels timed in
/// modules ran there than alone (the ratio of their totals). Unscaled, the tuned costs of kernels
/// no module ran look cheap next to times in modules: on YOLOX-Nano each round then traded dozens
/// of kernels for ones that ran slower than that.
OrchestrationProblem in_module_costs(const OrchestrationProblem& tuned,
                                     const std::map<int, double>& in_module);

/// Runs the module rounds on `tuned` (a measured CPU plan). `scratch(r)` names the directory the
/// module of round r is stitched into; all but the chosen one are removed, all of them when this
/// throws.
InModulePlan plan_in_modules(const TunedModel& tuned, const ModuleRoundsOptions& options,
                             const std::function<std::string(int)>& scratch);

}  // namespace orch::driver
