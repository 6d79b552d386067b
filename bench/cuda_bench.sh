#!/usr/bin/env bash
# orch's CUDA modules on this machine's GPU (issue #15): each zoo model, each fusion policy
# (full orchestration, one kernel per operator, greedy fusion), tuned with analytic costs
# (--compile-only) or, with ORCH_CUDA_MEASURE=1, each candidate kernel measured on the GPU;
# validated on the GPU against the interpreter kernel by kernel (--validate-on-gpu), then timed:
# the median of RUNS runs of the launch sequence, CUDA events around it, launched kernel by
# kernel and replayed as one CUDA graph (`orch run --repeat`; each run log also holds the
# per-kernel profile, `--profile`). Prints a markdown table and writes WORK/results.csv. Needs an
# NVIDIA GPU; there is none on the development machines.
#
#   bench/cuda_bench.sh [ORCH] [WORK]    the orch command (default build/tools/orch/orch) and the
#                                        folder for models, modules and logs (default cuda-bench)
#   ORCH_CUDA_MODELS="candy yolov4:16"   each NAME or NAME:BATCH (default: every zoo model at
#                                        batch 1, then at batch 16)
#   ORCH_CUDA_POLICIES="full operator greedy"
#   ORCH_CUDA_JOBS=8                     optimizations at once (each is mostly one core)
#   ORCH_CUDA_TIMEOUT=600                seconds one optimization may take
#   ORCH_CUDA_RUNS=30                    timed runs per module, after warm-up
#   ORCH_CUDA_GPU=h200                   the GPU description to plan for (--gpu)
#   ORCH_CUDA_OPTIMIZE_FLAGS="--gpu-libraries none"   extra `orch optimize` flags for every
#                                        module (that one: generated code only, no cuBLAS or
#                                        cuDNN calls)
#   ORCH_CUDA_MEASURE=1                  tune with measurements on this GPU instead of analytic
#                                        costs (one optimization at a time: ORCH_CUDA_JOBS is 1)
#   ORCH_CUDA_VALIDATE=host              validate by running the CUDA code on the host instead
#                                        (slow; for trying this script without a GPU)
#   ORCH_CUDA_UNVALIDATED="greedy"       policies compiled without validation (the interpreter
#                                        takes minutes on a large model at batch 16); the table
#                                        marks their times with "(nv)"
set -uo pipefail
orch=${1:-build/tools/orch/orch}
work=${2:-cuda-bench}
policies=${ORCH_CUDA_POLICIES:-"full operator greedy"}
jobs=${ORCH_CUDA_JOBS:-8}
timeout_s=${ORCH_CUDA_TIMEOUT:-600}
runs=${ORCH_CUDA_RUNS:-30}
gpu=${ORCH_CUDA_GPU:-h200}
optimize_flags=${ORCH_CUDA_OPTIMIZE_FLAGS:-}
tuning=--compile-only
if [ "${ORCH_CUDA_MEASURE:-0}" = 1 ]; then
  tuning="" jobs=1  # measurements need the GPU to themselves
fi
validate=--validate-on-gpu
[ "${ORCH_CUDA_VALIDATE:-gpu}" = host ] && validate=""
unvalidated=" ${ORCH_CUDA_UNVALIDATED:-} "
names=$("$orch" zoo list | awk 'NR > 1 && $1 != "" {print $1}') || exit 2
models=${ORCH_CUDA_MODELS:-"$(for b in 1 16; do for n in $names; do echo "$n:$b"; done; done)"}
mkdir -p "$work"

# Folder of a model at a batch: NAME, or NAME-bB for B > 1.
folder() {
  local name=${1%%:*} batch=1
  [[ $1 == *:* ]] && batch=${1##*:}
  if ((batch > 1)); then echo "$work/$name-b$batch"; else echo "$work/$name"; fi
}

for model in $models; do
  name=${model%%:*} batch=1
  [[ $model == *:* ]] && batch=${model##*:}
  dir=$(folder "$model")
  mkdir -p "$dir"
  "$orch" zoo build "$name" --batch "$batch" -o "$dir/model.onnx" >"$dir/zoo.log" 2>&1 ||
    echo "$model: orch zoo build failed (see $dir/zoo.log)" >&2
done

# One optimization: the module in DIR/POLICY, its log beside it, its seconds in POLICY.seconds.
optimize_one() {
  local dir=$1 policy=$2 start=$SECONDS check=$validate
  [[ $unvalidated == *" $policy "* ]] && check=--no-validate
  rm -rf "${dir:?}/$policy"
  timeout --foreground "$timeout_s" "$orch" optimize "$dir/model.onnx" -o "$dir/$policy" --fusion "$policy" \
    --target cuda $tuning $check --gpu "$gpu" $optimize_flags -q >"$dir/$policy.log" 2>&1
  local rc=$?
  echo $((SECONDS - start)) >"$dir/$policy.seconds"
  if ((rc == 0)); then
    echo "$(basename "$dir") $policy: optimized (${check:-validated on the host}) in $((SECONDS - start)) s"
  else
    echo "$(basename "$dir") $policy: FAILED (exit $rc; $dir/$policy.log): $(tail -n 1 "$dir/$policy.log")"
  fi
}
export -f optimize_one
export orch gpu timeout_s validate unvalidated optimize_flags tuning
for model in $models; do
  [ -s "$(folder "$model")/model.onnx" ] || continue
  for policy in $policies; do echo "$(folder "$model") $policy"; done
done | xargs -P "$jobs" -L 1 bash -c 'optimize_one "$0" "$1"'

# Timing, one module at a time (the GPU to itself).
csv="$work/results.csv"
echo "model,policy,kernels,launches,plan_us_estimated,gpu_ms,optimize_s,validated,gpu_graph_ms" >"$csv"
for model in $models; do
  dir=$(folder "$model")
  for policy in $policies; do
    module="$dir/$policy" ms="" graph_ms="" kernels="" launches="" plan="" validated=yes
    [[ $unvalidated == *" $policy "* ]] && validated=no
    if [ -f "$module/manifest.json" ] && [ -f "$module/kernels.cubin" ]; then
      summary=$(grep -o 'module: .*' "$dir/$policy.log" | tail -n 1)
      kernels=$(sed -n 's/.*(\([0-9]*\) CUDA kernels.*/\1/p' <<<"$summary")
      launches=$(sed -n 's/.* \([0-9]*\) launches.*/\1/p' <<<"$summary")
      plan=$(sed -n 's/.*plan \([0-9.]*\) us.*/\1/p' <<<"$summary")
      "$orch" run "$module" --random-inputs --repeat "$runs" --profile --profile-top 12 \
        --out "$module/outputs" >"$dir/$policy.run.log" 2>&1 &&
        ms=$(sed -n 's/^gpu_ms: median=\([0-9.]*\).*/\1/p' "$dir/$policy.run.log")
      graph_ms=$(sed -n 's/^gpu_graph_ms: median=\([0-9.]*\).*/\1/p' "$dir/$policy.run.log")
      [ -n "$ms" ] || echo "$(basename "$dir") $policy: orch run failed ($dir/$policy.run.log)" >&2
    fi
    echo "$(basename "$dir"),$policy,$kernels,$launches,$plan,$ms,$(cat "$dir/$policy.seconds" 2>/dev/null),$validated,$graph_ms" >>"$csv"
  done
done

# The table: one row per model, the policies side by side, speedups over one kernel per operator.
awk -F, -v policies="$policies" '
  NR == 1 { next }
  { if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
    ms[$1, $2] = $6; graph[$1, $2] = $9; kernels[$1, $2] = $3 "/" $4; nv[$1, $2] = ($8 == "no" && $6 != "") ? " (nv)" : "" }
  END {
    np = split(policies, p, " ")
    header = "| model |"; rule = "|---|"
    for (i = 1; i <= np; ++i) { header = header " " p[i] " ms | " p[i] " kernels/launches |"; rule = rule "---:|---:|" }
    print header " full as one CUDA graph ms | full vs operator | full vs greedy |"; print rule "---:|---:|---:|"
    for (r = 1; r <= n; ++r) {
      m = order[r]; line = "| " m " |"
      for (i = 1; i <= np; ++i) line = line " " ms[m, p[i]] nv[m, p[i]] " | " kernels[m, p[i]] " |"
      f = ms[m, "full"]; o = ms[m, "operator"]; g = ms[m, "greedy"]
      line = line " " graph[m, "full"] " |"
      line = line " " (f > 0 && o > 0 ? sprintf("%.2fx", o / f) : "") " | " (f > 0 && g > 0 ? sprintf("%.2fx", g / f) : "") " |"
      print line
    }
  }' "$csv"
