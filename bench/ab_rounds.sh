#!/usr/bin/env bash
# A/B of compiled modules against ONNX Runtime on one model, in interleaved rounds: each round
# times ONNX Runtime, then every module, so that all of them see the same load (single ratios
# move by 10-30% between runs on shared machines; a paired ratio per round moves far less).
# Prints one line per runner and round, then a table: each runner's median and minimum over the
# rounds and the median of its per-round ratio to ONNX Runtime's time.
#
#   bench/ab_rounds.sh MODEL.onnx MODULE_DIR [MODULE_DIR ...]
#   ORCH_AB_ROUNDS=15  ORCH_AB_RUNS=30  ORCH_AB_THREADS=1  ORCH_AB_BUILD=build
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 2 ]; then
  echo "usage: bench/ab_rounds.sh MODEL.onnx MODULE_DIR [MODULE_DIR ...]" >&2
  exit 2
fi
model=$1
shift
rounds=${ORCH_AB_ROUNDS:-15}
runs=${ORCH_AB_RUNS:-30}
threads=${ORCH_AB_THREADS:-1}
orch="${ORCH_AB_BUILD:-build}/tools/orch/orch"
for n in "$rounds" "$runs" "$threads"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || {
    echo "ORCH_AB_ROUNDS, ORCH_AB_RUNS and ORCH_AB_THREADS must be positive integers" >&2
    exit 2
  }
done
[ -f "$model" ] || { echo "no model file '$model'" >&2; exit 2; }
[ -x "$orch" ] || { echo "no orch binary at '$orch' (./run build first)" >&2; exit 2; }
for dir in "$@"; do
  [ -f "$dir/manifest.json" ] || { echo "'$dir' is not a module (no manifest.json)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
lines="$work/rounds.txt"
mkdir -p "$work/ort" "$work/out"
# One random input (the zoo's models have one), the same for every runner.
input_name=$(/usr/bin/python3 - "$1" "$work/ort/input_0.npy" <<'EOF'
import json, sys, numpy as np
spec = json.load(open(f"{sys.argv[1]}/manifest.json"))["inputs"]
if len(spec) != 1:
    sys.exit("ab_rounds.sh: models of one input only")
np.save(sys.argv[2], np.random.default_rng(1).uniform(-1, 1, spec[0]["shape"]).astype(np.float32))
print(spec[0]["name"])
EOF
)
for ((r = 1; r <= rounds; r++)); do
  ms=$(node tools/ort/run_model.js "$model" "$work/ort" --threads "$threads" --bench "$runs" |
    sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')
  if [ -z "$ms" ]; then
    echo "ONNX Runtime failed: $(cat "$work/ort/error.txt" 2>/dev/null)" >&2
    exit 1
  fi
  echo "round $r ort $ms" | tee -a "$lines"
  for dir in "$@"; do
    ms=$("$orch" run "$dir" --input "$input_name=$work/ort/input_0.npy" --repeat "$runs" \
      --threads "$threads" --out "$work/out" | sed -n 's/.*median=\([0-9.]*\).*/\1/p')
    [ -n "$ms" ] || { echo "orch run $dir failed" >&2; exit 1; }
    echo "round $r $dir $ms" | tee -a "$lines"
  done
done
/usr/bin/python3 - "$lines" "$rounds" "$runs" "$threads" <<'EOF'
import collections, statistics, sys
path, rounds, runs, threads = sys.argv[1:]
times = collections.defaultdict(dict)  # runner -> round -> ms
order = []
for line in open(path):
    _, r, runner, ms = line.split()
    if runner not in order:
        order.append(runner)
    times[runner][int(r)] = float(ms)
print(f"\n{rounds} rounds of {runs} runs each at {threads} thread(s); ms\n")
print("| runner | median | min | median of per-round time / ORT |")
print("|---|---:|---:|---:|")
for runner in order:
    t = times[runner]
    ratios = [t[r] / times["ort"][r] for r in t if r in times["ort"]]
    print(f"| {runner} | {statistics.median(t.values()):.2f} | {min(t.values()):.2f} "
          f"| {statistics.median(ratios):.3f} |")
EOF
