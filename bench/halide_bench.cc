// Benchmark of the Halide backend on memory-bound kernels: achieved bandwidth (the bytes a kernel
// cannot avoid moving: its inputs and outputs once, / time) as a fraction of the machine model's
// DRAM bandwidth (schedule::host_machine()), under the default schedule, the tile search's
// configs (the best of its top 3, and its first) and Halide's own autoschedulers (Mullapudi2016,
// Adams2019; Debian's libhalide14 ships both as plugins). Prints markdown tables.
//
//   bench_halide [seconds per measurement, default 0.3] [rows, default 8192]
// Times are the best of repeated runs after one warm-up run (the machine may be shared: the load
// average before and after is printed with the table).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "codegen/halide/halide_backend.h"
#include "interp/random_inputs.h"
#include "ir/error.h"
#include "ir/text_format.h"
#include "schedule/search.h"

namespace orch {
namespace {

double best_seconds(codegen::Kernel& k, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                    double budget) {
  k.run(in, out);
  double best = 1e30, total = 0;
  for (int reps = 0; reps < 3 || total < budget; ++reps) {
    auto start = std::chrono::steady_clock::now();
    k.run(in, out);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, s);
    total += s;
  }
  return best;
}

// The 1, 5 and 15 minute load averages ("?" where /proc is missing).
std::string load_average() {
  std::ifstream in("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  if (!(in >> a >> b >> c)) return "?";
  return fmt::format("{:.2f} {:.2f} {:.2f}", a, b, c);
}

struct Case {
  std::string name;
  Graph graph;
};

std::string chain(int64_t rows, int64_t cols) {
  return fmt::format(R"(graph chain(%x: f32[{0},{1}], %y: f32[{0},{1}]) {{
  const %half = f32[]{{0.5}}
  const %one = f32[]{{1}}
  const %r = f32[]{{0.70710678}}
  %a: f32[{0},{1}] = prim.Elementwise(%x, %y) {{fn = "add"}}
  %b: f32[{0},{1}] = prim.Elementwise(%a, %r) {{fn = "mul"}}
  %t: f32[{0},{1}] = prim.Elementwise(%b) {{fn = "erf"}}
  %u: f32[{0},{1}] = prim.Elementwise(%t, %one) {{fn = "add"}}
  %h: f32[{0},{1}] = prim.Elementwise(%a, %half) {{fn = "mul"}}
  %z: f32[{0},{1}] = prim.Elementwise(%h, %u) {{fn = "mul"}}
  return %z
}})",
                     rows, cols);
}

std::string softmax(int64_t rows, int64_t cols) {
  return fmt::format(R"(graph softmax(%x: f32[{0},{1}]) {{
  %m: f32[{0},1] = prim.Reduce(%x) {{axes = [1], kind = "max"}}
  %mb: f32[{0},{1}] = prim.Broadcast(%m) {{shape = [{0}, {1}]}}
  %s: f32[{0},{1}] = prim.Elementwise(%x, %mb) {{fn = "sub"}}
  %e: f32[{0},{1}] = prim.Elementwise(%s) {{fn = "exp"}}
  %t: f32[{0},1] = prim.Reduce(%e) {{axes = [1], kind = "sum"}}
  %tb: f32[{0},{1}] = prim.Broadcast(%t) {{shape = [{0}, {1}]}}
  %y: f32[{0},{1}] = prim.Elementwise(%e, %tb) {{fn = "div"}}
  return %y
}})",
                     rows, cols);
}

std::string layernorm(int64_t rows, int64_t cols) {
  return fmt::format(R"(graph layernorm(%x: f32[{0},{1}], %g: f32[1,{1}], %b: f32[1,{1}]) {{
  const %inv = f32[]{{{2}}}
  const %eps = f32[]{{1e-5}}
  %s: f32[{0},1] = prim.Reduce(%x) {{axes = [1], kind = "sum"}}
  %m: f32[{0},1] = prim.Elementwise(%s, %inv) {{fn = "mul"}}
  %mb: f32[{0},{1}] = prim.Broadcast(%m) {{shape = [{0}, {1}]}}
  %d: f32[{0},{1}] = prim.Elementwise(%x, %mb) {{fn = "sub"}}
  %d2: f32[{0},{1}] = prim.Elementwise(%d, %d) {{fn = "mul"}}
  %v: f32[{0},1] = prim.Reduce(%d2) {{axes = [1], kind = "sum"}}
  %vm: f32[{0},1] = prim.Elementwise(%v, %inv) {{fn = "mul"}}
  %ve: f32[{0},1] = prim.Elementwise(%vm, %eps) {{fn = "add"}}
  %sd: f32[{0},1] = prim.Elementwise(%ve) {{fn = "sqrt"}}
  %sb: f32[{0},{1}] = prim.Broadcast(%sd) {{shape = [{0}, {1}]}}
  %n: f32[{0},{1}] = prim.Elementwise(%d, %sb) {{fn = "div"}}
  %gb: f32[{0},{1}] = prim.Broadcast(%g) {{shape = [{0}, {1}]}}
  %bb: f32[{0},{1}] = prim.Broadcast(%b) {{shape = [{0}, {1}]}}
  %ng: f32[{0},{1}] = prim.Elementwise(%n, %gb) {{fn = "mul"}}
  %y: f32[{0},{1}] = prim.Elementwise(%ng, %bb) {{fn = "add"}}
  return %y
}})",
                     rows, cols, 1.0 / static_cast<double>(cols));
}

double value_bytes(const Graph& g, ValueId v) {
  const TensorType& t = g.value(v).type;
  return static_cast<double>(num_elements(t.shape) * static_cast<int64_t>(dtype_size(t.dtype)));
}

// Bytes of every kernel input and output once.
double unavoidable_bytes(const Graph& g) {
  double bytes = 0;
  for (ValueId v : g.inputs()) bytes += value_bytes(g, v);
  for (ValueId v : g.outputs()) bytes += value_bytes(g, v);
  return bytes;
}

struct Measured {
  double gbs = 0;
  double compile_s = 0;
  std::string error;
};

Measured measure(const Graph& g, const std::function<codegen::HalideKernel()>& compile,
                 double budget) {
  Measured m;
  try {
    codegen::HalideKernel hk = compile();
    m.compile_s = hk.compile_cpu_seconds;
    std::vector<Tensor> in = interp::random_inputs(g, 1);
    std::vector<Tensor> out;
    for (ValueId v : g.outputs()) out.emplace_back(g.value(v).type.dtype, g.value(v).type.shape);
    m.gbs = unavoidable_bytes(g) / best_seconds(*hk.kernel, in, out, budget) / 1e9;
  } catch (const Error& e) {
    m.error = e.what();
  }
  return m;
}

std::string cell(const Measured& m, double dram) {
  if (!m.error.empty()) return "failed";
  return fmt::format("{:.1f} ({:.0f}%)", m.gbs, 100 * m.gbs / dram);
}

int run(int argc, char** argv) {
  double budget = argc > 1 ? std::atof(argv[1]) : 0.3;
  int64_t rows = argc > 2 ? std::atoll(argv[2]) : 8192;
  schedule::Machine machine = schedule::host_machine();
  double dram = machine.levels.back().bandwidth_gbs;
  int64_t llc = machine.levels[machine.levels.size() - 2].capacity;
  std::vector<Case> cases = {{"GELU(x + y) (erf)", parse_graph(chain(rows, 1024))},
                             {"softmax rows", parse_graph(softmax(rows, 1024))},
                             {"LayerNorm rows", parse_graph(layernorm(rows, 1024))},
                             {"softmax rows (197 wide)", parse_graph(softmax(rows, 197))}};
  // Adams2019 reports its search on stderr: the table is printed after every measurement.
  std::vector<std::string> table, notes;
  std::string load_before = load_average();
  for (const Case& c : cases) {
    const Graph& g = c.graph;
    Measured def = measure(
        g, [&] { return codegen::halide_jit(g); }, budget);
    schedule::SearchResult r =
        schedule::search_tiles(schedule::make_tile_graph(g), machine, {.top_k = 3});
    Measured first, best;
    for (size_t i = 0; i < r.configs.size(); ++i) {
      codegen::HalideSchedule s = codegen::halide_schedule_from_tile_config(g, r.configs[i].config);
      Measured m = measure(
          g, [&] { return codegen::halide_jit(g, &s); }, budget);
      if (i == 0) first = m;
      if (m.error.empty() && m.gbs > best.gbs) best = m;
      notes.push_back(fmt::format("{} config {}: {} -> {} (JIT compile CPU {:.2f} s)", c.name, i,
                                  codegen::halide_schedule_to_text(s), cell(m, dram), m.compile_s));
    }
    if (r.configs.empty()) first.error = best.error = r.note;
    Measured mull = measure(
        g,
        [&] { return codegen::halide_jit_autoscheduled(g, "Mullapudi2016", machine.cores, llc); },
        budget);
    Measured adams = measure(
        g, [&] { return codegen::halide_jit_autoscheduled(g, "Adams2019", machine.cores, llc); },
        budget);
    for (const Measured* m : {&def, &first, &best, &mull, &adams})
      if (!m->error.empty()) notes.push_back(fmt::format("{}: {}", c.name, m->error));
    table.push_back(fmt::format("| {} | {:.0f} | {} | {} | {} | {} | {} |", c.name,
                                unavoidable_bytes(g) / 1e6, cell(def, dram), cell(first, dram),
                                cell(best, dram), cell(mull, dram), cell(adams, dram)));
    notes.push_back(
        fmt::format("{}: JIT compile CPU s: default {:.2f}, config #1 {:.2f}, "
                    "Mullapudi2016 {:.2f}, Adams2019 {:.2f}",
                    c.name, def.compile_s, first.compile_s, mull.compile_s, adams.compile_s));
  }
  fmt::print("machine: {} cores, DRAM {:.1f} GB/s (machine model), LLC {} KiB; f32, {} rows\n",
             machine.cores, dram, llc / 1024, rows);
  fmt::print("load average: {} before, {} after\n\n", load_before, load_average());
  fmt::print("GB/s moved (unavoidable bytes / best time) and % of DRAM bandwidth\n\n");
  fmt::print(
      "| kernel | MB | default | tile config #1 | tile config best of 3 | Mullapudi2016 | "
      "Adams2019 |\n|---|---|---|---|---|---|---|\n");
  for (const std::string& row : table) fmt::print("{}\n", row);
  fmt::print("\n");
  for (const std::string& n : notes) fmt::print("- {}\n", n);
  return 0;
}

}  // namespace
}  // namespace orch

int main(int argc, char** argv) {
  try {
    return orch::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_halide: %s\n", e.what());
    return 1;
  }
}
