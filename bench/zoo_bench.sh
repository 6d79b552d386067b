#!/usr/bin/env bash
# `./run bench`: every zoo model side by side, in one run, at 1 and 2 threads: ONNX Runtime,
# ONNX Runtime on orch's primitive graph, and orch with one kernel per operator, greedy fusion
# and full orchestration. Prints a markdown table, writes build/bench/results.csv and draws
# build/bench/speedup.svg (gnuplot) of the speedup over ONNX Runtime; build/bench/machine.txt
# names the CPU (model, vector ISA, cores).
#
#   bench/zoo_bench.sh [BUILD_DIR]
#   ORCH_BENCH_MODELS="candy segformer-b0:16"  models, each NAME or NAME:BATCH (default: every
#                             zoo model at batch 1, and Segformer-B0 at batch 16 too: the
#                             Korch paper's case where greedy fusion loses: 2.5 hours of it
#                             on 2 cores with a warm database, tuning, validation and timing);
#                             rows and folders of batch B > 1 are named NAME-bB
#   ORCH_BENCH_SIZE=64                         input size for every model (default: published)
#   ORCH_BENCH_THREADS="1 2"  ORCH_BENCH_RUNS=30  timed runs per cell, after warm-up
#   ORCH_BENCH_ROUNDS=3       runners take turns in this many rounds of ceil(RUNS/ROUNDS) runs
#                             each; a cell is the median of its rounds' medians
#   ORCH_BENCH_OPTIMIZE_FLAGS="--exact-s 0"   extra `orch optimize` flags for every policy
#   ORCH_BENCH_REUSE=1        time the modules an earlier run wrote instead of optimizing again
#   ORCH_BENCH_POLICIES="full"  orch's policies to optimize and time (default "full operator
#                             greedy"); the others' columns stay empty
#   ORCH_BENCH_TUNE_PER_THREADS=1  optimize every policy once per thread count (`--threads N`,
#                             modules POLICY-tN) and time each count with its own module, as a
#                             user who deploys at N threads would tune; else one module per
#                             policy, tuned with every core, is timed at every count. Doubles
#                             the tuning time at two counts.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
orch="$build/tools/orch/orch"
work="$build/bench"
runs=${ORCH_BENCH_RUNS:-30}
rounds_per_cell=${ORCH_BENCH_ROUNDS:-3}
[[ "$rounds_per_cell" =~ ^[1-9][0-9]*$ ]] || {
  echo "ORCH_BENCH_ROUNDS must be a positive integer, not '$rounds_per_cell'" >&2
  exit 2
}
runs_per_round=$(((runs + rounds_per_cell - 1) / rounds_per_cell))
thread_counts=${ORCH_BENCH_THREADS:-"1 2"}
policies=${ORCH_BENCH_POLICIES:-"full operator greedy"}
for policy in $policies; do
  [[ "$policy" =~ ^(full|operator|greedy)$ ]] || {
    echo "ORCH_BENCH_POLICIES: unknown policy '$policy' (full, operator, greedy)" >&2
    exit 2
  }
done
models=${ORCH_BENCH_MODELS:-"$("$orch" zoo list | awk 'NR > 1 && $1 != "" {print $1}') segformer-b0:16"}
size_flag=()
[ -n "${ORCH_BENCH_SIZE:-}" ] && size_flag=(--size "$ORCH_BENCH_SIZE")
read -r -a optimize_flags <<<"${ORCH_BENCH_OPTIMIZE_FLAGS:-}"
mkdir -p "$work"
csv="$work/results.csv"
# The machine the table was measured on, printed above it: the same modules race ONNX Runtime
# differently on another CPU (oneDNN's and MLAS's AVX2 and AVX-512 kernels are not equally good).
isa="SSE"
grep -qw avx2 /proc/cpuinfo && isa="AVX2"
grep -qw avx512f /proc/cpuinfo && isa="AVX-512"
machine="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $isa, $(nproc) cores"
echo "$machine" >"$work/machine.txt"
echo "model,threads,runner,latency_ms,kernels,tuning_s,peak_arena_mib,tuned_threads" >"$csv"

median_ms() {  # MODULE_DIR THREADS
  "$orch" run "$1" --input "$input_name=$dir/ort/input_0.npy" --out "$dir/out" \
    --repeat "$runs_per_round" --threads "$2" | tail -n 1 | sed -n 's/.*median=\([0-9.]*\).*/\1/p'
}
ort_ms() {  # MODEL THREADS
  node tools/ort/run_model.js "$1" "$dir/ort" --threads "$2" --bench "$runs_per_round" |
    sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p'
}
# The module of POLICY timed at THREADS: its own per thread count, or the one tuned on every core
# (--threads 0). With ORCH_BENCH_REUSE, a module tuned at THREADS (POLICY-tTHREADS, by an earlier
# per-thread run or by hand) is timed where there is one; the table says which was.
if [ -n "${ORCH_BENCH_TUNE_PER_THREADS:-}" ]; then
  tune_counts=$thread_counts
  module_dir() { echo "$1-t$2"; }
else
  tune_counts=0
  module_dir() {
    if [ -n "${ORCH_BENCH_REUSE:-}" ] && [ "$2" != 0 ] && [ -f "$dir/$1-t$2/manifest.json" ]; then
      echo "$1-t$2"
    else
      echo "$1"
    fi
  }
fi
tuned_threads() {  # MODULE_DIR_NAME (in $dir): the thread count it was tuned at, for the table
  local name  # a link to POLICY-tN (a module reused at another thread count) was tuned at N
  name=$(basename "$(readlink -f "$dir/$1")")
  case $name in
    *-t[0-9]*) echo "${name##*-t}" ;;
    *) echo "all" ;;
  esac
}
one_round() {  # RUNNER THREADS: the runner's median over one round, in ms; "nan" when it failed
  local ms=""
  case $1 in
    ort) ms=$(ort_ms "$dir/model.onnx" "$2") ;;
    ort-primitives) ms=$(ort_ms "$dir/primitives.onnx" "$2") ;;
    *) ms=$(median_ms "$dir/$(module_dir "${1#orch-}" "$2")" "$2") ;;
  esac || true  # a failed run leaves its cell empty; the other runners still run
  [ -n "$ms" ] || echo "$model: $1 at $2 threads failed in a round" >&2
  echo "${ms:-nan}"
}
median_of() {  # VALUES...: the median of those that are numbers; empty when none is
  /usr/bin/python3 -c "import math, statistics, sys
v = [x for x in map(float, sys.argv[1:]) if not math.isnan(x)]
print(statistics.median(v) if v else '')" "$@"
}
module_field() {  # MODULE_DIR PYTHON_EXPRESSION_OF_m
  /usr/bin/python3 -c "import json,sys; m=json.load(open(sys.argv[1]+'/manifest.json')); print($2)" "$1"
}

for entry in $models; do
  zoo_name=${entry%%:*}
  batch=1
  [[ "$entry" == *:* ]] && batch=${entry#*:}
  [[ "$batch" =~ ^[1-9][0-9]*$ ]] || {
    echo "bad batch in ORCH_BENCH_MODELS entry '$entry' (NAME or NAME:BATCH)" >&2
    exit 2
  }
  model=$zoo_name
  [ "$batch" -gt 1 ] && model="$zoo_name-b$batch"
  dir="$work/$model"
  mkdir -p "$dir/ort"
  echo "== $model" >&2
  "$orch" zoo build "$zoo_name" --batch "$batch" "${size_flag[@]}" -o "$dir/model.onnx" >&2
  "$orch" fission "$dir/model.onnx" -o "$dir/primitives.onnx" >&2
  # Full first: its tuning time is then that of a cold database (the baselines' kernels differ).
  # `modules` holds the module directories that were built (relative to $dir).
  modules=()
  for tune_threads in $tune_counts; do
    for policy in $policies; do
      module=$(module_dir "$policy" "$tune_threads")
      if [ -n "${ORCH_BENCH_REUSE:-}" ] && [ -f "$dir/$module/manifest.json" ]; then
        modules+=("$module")
        continue
      fi
      rm -rf "${dir:?}/$module"
      # A policy that fails to optimize is reported and its row left empty; the others still run.
      if ! "$orch" optimize "$dir/model.onnx" -o "$dir/$module" --fusion "$policy" \
        --threads "$tune_threads" "${optimize_flags[@]}" >"$dir/$module.log" 2>&1; then
        echo "$model: orch optimize --fusion $policy --threads $tune_threads failed:" \
          "$(tail -n 1 "$dir/$module.log")" >&2
        continue
      fi
      modules+=("$module")
      grep -v "^[a-z ]* round " "$dir/$module.log" >&2
      sed -n 's/^time: tune \([0-9.]*\) s.*/\1/p' "$dir/$module.log" >"$dir/$module.seconds"
    done
  done
  [ ${#modules[@]} -eq 0 ] && continue
  input_name=$(module_field "$dir/${modules[0]}" "m['inputs'][0]['name']")
  /usr/bin/python3 - "$dir" "${modules[0]}" <<'PY'
import json, sys, numpy as np
d = sys.argv[1]
spec = json.load(open(f"{d}/{sys.argv[2]}/manifest.json"))["inputs"][0]
np.save(f"{d}/ort/input_0.npy",
        np.random.default_rng(1).uniform(-1, 1, spec["shape"]).astype(np.float32))
PY
  for threads in $thread_counts; do
    # Runners take turns, a share of the runs each per round, and a cell is the median of its
    # rounds' medians: this machine's speed drifts by tens of percent over minutes (other
    # tenants), which a runner timed all at once would take for its own.
    # Each round starts one runner later, so that none is always timed first.
    runners=(ort ort-primitives)
    for policy in $policies; do
      [ -f "$dir/$(module_dir "$policy" "$threads")/manifest.json" ] && runners+=("orch-$policy")
    done
    declare -A rounds=()
    for ((round = 0; round < rounds_per_cell; ++round)); do
      for ((i = 0; i < ${#runners[@]}; ++i)); do
        runner=${runners[(round + i) % ${#runners[@]}]}
        rounds[$runner]+=" $(one_round "$runner" "$threads")"
      done
    done
    echo "$model,$threads,ort,$(median_of ${rounds[ort]}),,,," >>"$csv"
    echo "$model,$threads,ort-primitives,$(median_of ${rounds[ort-primitives]}),,,," >>"$csv"
    for policy in $policies; do
      module=$(module_dir "$policy" "$threads")
      [ -f "$dir/$module/manifest.json" ] || continue
      echo "$model,$threads,orch-$policy,$(median_of ${rounds[orch-$policy]}),$(module_field \
        "$dir/$module" "len(m['kernels'])"),$(cat "$dir/$module.seconds"),$(module_field \
        "$dir/$module" "round(m['arena_bytes'] / 2**20, 2)"),$(tuned_threads "$module")" >>"$csv"
    done
    unset rounds
  done
done

echo "machine: $machine"
echo
/usr/bin/python3 - "$csv" "$work" <<'PY'
import csv, math, sys, collections
rows = list(csv.DictReader(open(sys.argv[1])))
work = sys.argv[2]
by = collections.defaultdict(dict)
for r in rows:
    by[(r["model"], r["threads"])][r["runner"]] = r
runners = ["ort", "ort-primitives", "orch-operator", "orch-greedy", "orch-full"]
print("| model | threads | " + " | ".join(f"{r} ms" for r in runners) +
      " | full vs ORT | kernels op/greedy/full | tuning s (full) | full tuned at threads |"
      " peak arena MiB |")
print("|---|---:|" + "---:|" * (len(runners) + 5))
speedups = collections.defaultdict(list)
for (model, threads), rs in by.items():
    ms = {r: float(rs[r]["latency_ms"]) if r in rs and rs[r]["latency_ms"] else math.nan
          for r in runners}
    ratio = ms["ort"] / ms["orch-full"]  # NaN when a runner failed: left out of the means
    if not math.isnan(ratio):
        speedups[threads].append(ratio)
    kernels = "/".join(rs.get(f"orch-{p}", {}).get("kernels", "-")
                       for p in ["operator", "greedy", "full"])
    full = rs.get("orch-full", {})
    print(f"| {model} | {threads} | " + " | ".join(f"{ms[r]:.3f}" for r in runners) +
          f" | {ratio:.2f}x | {kernels} | {full.get('tuning_s') or '-'} | "
          f"{full.get('tuned_threads') or '-'} | {full.get('peak_arena_mib', '-')} |")
for threads, values in speedups.items():
    geo = math.exp(sum(math.log(v) for v in values) / len(values))
    print(f"\ngeometric mean speedup of orch full over ONNX Runtime at {threads} threads: "
          f"{geo:.2f}x (min {min(values):.2f}x)")
with open(f"{work}/speedup.dat", "w") as f:
    for (model, threads), rs in by.items():
        if "orch-full" in rs and rs["orch-full"]["latency_ms"]:
            f.write(f"{model}/{threads}t "
                    f"{float(rs['ort']['latency_ms']) / float(rs['orch-full']['latency_ms'])}\n")
PY
if command -v gnuplot >/dev/null; then
  gnuplot -e "set terminal svg size 900,400; set output '$work/speedup.svg';
    set style data histograms; set style fill solid; set ylabel 'speedup over ONNX Runtime';
    set xtics rotate by -30; set key off; set grid y;
    plot '$work/speedup.dat' using 2:xtic(1)"
  echo "chart: $work/speedup.svg" >&2
fi
echo "csv: $csv" >&2
