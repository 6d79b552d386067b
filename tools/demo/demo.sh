#!/usr/bin/env bash
# `./run demo`: orch's main job on the bundled transformer-tiny (attention, LayerNorm, GELU MLP):
# optimize it (full orchestration, and one kernel per operator for comparison), run both compiled
# modules, run ONNX Runtime on the same model with the same threads, print a table.
#
#   tools/demo/demo.sh [BUILD_DIR]     (ORCH_DEMO_THREADS, default: all cores)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
orch="$build/tools/orch/orch"
work="$build/demo"
threads=${ORCH_DEMO_THREADS:-$(nproc)}
runs=100
mkdir -p "$work"

echo "== orch zoo build transformer-tiny"
"$orch" zoo build transformer-tiny -o "$work/model.onnx"

# Tuning is capped for a demo: kernels of at most 12 primitives, the estimated phase (the
# plan) within 300 s, the exact phase (proving it) 60 s. A capped plan is the best over the
# kernels measured by then, and a rerun continues from the tuning database
# (~/.cache/orch/tuning.db) where the last one stopped.
optimize() {  # POLICY
  echo "== orch optimize --fusion $1"
  "$orch" optimize "$work/model.onnx" -o "$work/$1" --fusion "$1" --threads "$threads" \
    --max-primitives 12 --max-lazy-s 300 --exact-s 60 | tee "$work/$1.log"
}
optimize full
optimize operator

# The same random input for every runner, as .npy (ONNX Runtime's harness reads input_0.npy).
mkdir -p "$work/ort"
/usr/bin/python3 - "$work" <<'PY'
import json, sys, numpy as np
work = sys.argv[1]
spec = json.load(open(f"{work}/full/manifest.json"))["inputs"][0]
rng = np.random.default_rng(1)
np.save(f"{work}/ort/input_0.npy", rng.uniform(-1, 1, spec["shape"]).astype(np.float32))
PY

latency() {  # MODULE_DIR
  "$orch" run "$1" --input "hidden_states=$work/ort/input_0.npy" --out "$work/out" \
    --repeat "$runs" --threads "$threads" | tail -n 1 | sed 's/.*median=\([0-9.]*\).*/\1/'
}
echo "== timing $runs runs each, $threads threads"
operator_ms=$(latency "$work/operator")
full_ms=$(latency "$work/full")  # last: its outputs stay in $work/out for the comparison
ort_ms=$(node tools/ort/run_model.js "$work/model.onnx" "$work/ort" --threads "$threads" \
  --bench "$runs" | sed -n 's/.*median_ms=\([0-9.]*\).*/\1/p')

/usr/bin/python3 - "$work" "$full_ms" "$operator_ms" "$ort_ms" "$threads" <<'PY'
import json, re, sys
work, full, operator, ort, threads = sys.argv[1], *map(float, sys.argv[2:5]), sys.argv[5]
def kernels(policy):
    return len(json.load(open(f"{work}/{policy}/manifest.json"))["kernels"])
def tuning(policy):
    m = re.search(r"tune ([0-9.]+) s", open(f"{work}/{policy}.log").read())
    return float(m.group(1)) if m else float("nan")
print(f"\ntransformer-tiny (hidden 64, 4 heads, 32 tokens), {threads} threads, median of runs:\n")
print("| runner | latency ms | vs ONNX Runtime | kernels | tuning s |")
print("|---|---:|---:|---:|---:|")
print(f"| ONNX Runtime 1.30 (graph optimization all) | {ort:.4f} | 1.00x | - | - |")
print(f"| orch, one kernel per operator | {operator:.4f} | {ort / operator:.2f}x | "
      f"{kernels('operator')} | {tuning('operator'):.1f} |")
print(f"| orch, full orchestration | {full:.4f} | {ort / full:.2f}x | {kernels('full')} | "
      f"{tuning('full'):.1f} |")
import numpy as np
diff = np.abs(np.load(f"{work}/out/output.npy") - np.load(f"{work}/ort/output_0.npy")).max()
print(f"\nlargest difference between orch's and ONNX Runtime's outputs: {diff:.2e}")
print(f"modules: {work}/full, {work}/operator (report.md, manifest.json; "
      f"orch explain DIR draws the plan)")
PY
