#!/usr/bin/env bash
# ONNX Runtime latency of each bundled model's operator graph versus its primitive graph (Korch's
# Fig. 7 experiment with ORT in place of TensorRT), measured side by side in one ORT process.
#   tools/ort/fission_latency.sh [BUILD_DIR] [RUNS] [THREADS]
# Prints a markdown table of "median (min)" milliseconds; the primitive graph is measured twice:
# with broadcasts written as Expand (as fission produces them) and left to ONNX's implicit
# broadcasting. The last column is the largest output difference between the ORT runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
runs=${2:-10}
threads=${3:-1}
orch=$build/tools/orch/orch
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
models=(candy segformer-b0 efficientvit-b1)
pairs=()
for m in "${models[@]}"; do
  "$orch" zoo build "$m" -o "$work/$m.onnx" >/dev/null
  "$orch" fission "$work/$m.onnx" -o "$work/$m.prim.onnx" >/dev/null
  "$orch" fission "$work/$m.onnx" -o "$work/$m.primi.onnx" --implicit-broadcast >/dev/null
  for v in op prim primi; do
    mkdir -p "$work/$m.$v"
  done
done
# Random inputs of each model's declared shape (the zoo's default), written once per variant.
/usr/bin/python3 - "$work" "${models[@]}" <<'PY'
import sys, numpy as np, onnx
work, models = sys.argv[1], sys.argv[2:]
for m in models:
    g = onnx.load(f"{work}/{m}.onnx").graph
    init = {i.name for i in g.initializer}
    inputs = [i for i in g.input if i.name not in init]
    for k, i in enumerate(inputs):
        dims = [d.dim_value for d in i.type.tensor_type.shape.dim]
        x = np.random.RandomState(k).rand(*dims).astype(np.float32)
        for v in ("op", "prim", "primi"):
            np.save(f"{work}/{m}.{v}/input_{k}.npy", x)
PY
for m in "${models[@]}"; do
  pairs+=("$work/$m.onnx" "$work/$m.op" "$work/$m.prim.onnx" "$work/$m.prim"
          "$work/$m.primi.onnx" "$work/$m.primi")
done
node tools/ort/run_model.js "${pairs[@]}" --bench "$runs" --threads "$threads" >"$work/bench.txt"
echo "| model | operators | primitives | ORT operator graph, ms | ORT primitive graph, ms | primitive graph, implicit broadcast, ms | max abs diff |"
echo "|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
  ops=$("$orch" fission "$work/$m.onnx" | head -1 | awk '{print $1}')
  prims=$("$orch" fission "$work/$m.onnx" | head -1 | awk '{print $4}')
  # "median (min)" of the runs.
  t() { grep "^$work/$m.$1: " "$work/bench.txt" | sed -E 's/.*median_ms=([0-9.]+) min_ms=([0-9.]+).*/\1 (\2)/'; }
  diff=$(/usr/bin/python3 -c "import numpy as np; print('%.2e' % max(np.abs(np.load('$work/$m.op/output_0.npy') - np.load('$work/$m.' + v + '/output_0.npy')).max() for v in ('prim', 'primi')))")
  echo "| $m | $ops | $prims | $(t onnx) | $(t prim.onnx) | $(t primi.onnx) | $diff |"
done
