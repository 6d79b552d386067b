#!/bin/bash
# The GPU check of issue #15 on a device machine, in one call of at most 10 minutes: a smoke
# test (one small module validated and timed), then bench/cuda_bench.sh over the zoo at batch 1
# and at batch 16, each phase under a deadline so that the logs of what finished come back.
# Here first: tools/cuda/carry_bundle.sh (writes .gpu/bundle.tar.xz, ignored by git); there,
# from the repository root, with .gpu carried: `bash tools/cuda/device_run.sh`. Writes into
# $OUT: gpu.txt (the GPU, driver, glibc), smoke.txt, b1.txt and b16.txt (the tables), logs.tgz
# (every optimize and run log, reports and CUDA sources). With MEASURED=1, after the smoke test:
# the small zoo models tuned with every candidate kernel measured on the GPU beside the analytic
# plans (measured.txt), instead of the batch tables. With GENERATED=1: four models with
# generated code only, no library calls (generated.txt), instead of the batch tables. With
# CONFORMANCE=1: Debian's ONNX node tests compiled for CUDA and run on the GPU, kernel by kernel
# against the interpreter (conformance.txt), instead of the batch tables.
set -u
t0=$SECONDS
# Runs "$@" in its own process group, killed whole after $1 seconds.
deadline() {
  local s=$1; shift
  setsid "$@" & local p=$!
  setsid bash -c "sleep $s; kill -TERM -- -$p" >/dev/null 2>&1 & local w=$!
  wait $p; local rc=$?; kill -- -$w 2>/dev/null; return $rc
}
logs() { tar czf $OUT/logs.tgz --exclude='*.onnx' --exclude='*.bin' --exclude='*.cubin' --exclude='*.npy' --exclude='plan.*' --exclude=manifest.json -C /tmp smoke gen cb1 cb16 cb16y 2>/dev/null; }
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; getconf GNU_LIBC_VERSION; nproc; free -g | head -2; } > $OUT/gpu.txt 2>&1
mkdir -p /tmp/ob && tar xJf .gpu/bundle.tar.xz -C /tmp/ob || exit 4
N=$(find /usr/local /opt /usr/lib -name 'libnvrtc.so.13' 2>/dev/null | head -n 1)
C=$(ldconfig -p | awk '/libcuda.so.1 /{print $NF; exit}')
# cuBLAS sits beside NVRTC in the toolkit; cuDNN may be elsewhere, or missing (then
# --gpu-libraries cublas: ORCH_CUDA_OPTIMIZE_FLAGS below).
D=$(find /usr/local /opt /usr/lib -name 'libcudnn.so.9' 2>/dev/null | head -n 1)
export ORCH_EXTRA_LIBS="$(dirname "${N:-/usr/local/cuda/lib64/x}"):$(dirname "${C:-/usr/local/nvidia/lib64/x}"):$(dirname "${D:-/usr/local/cuda/lib64/x}"):/usr/local/nvidia/lib64:/usr/local/cuda/lib64"
[ -n "$D" ] || export ORCH_CUDA_OPTIMIZE_FLAGS="--gpu-libraries cublas"
echo "nvrtc=$N cuda=$C cudnn=$D extra=$ORCH_EXTRA_LIBS" >> $OUT/gpu.txt
# The shipped H200 description on an H200; another GPU (the device machines include H100s)
# planned for as its driver describes it, so that the tables name the GPU they ran on, unless
# that description fails on the tiny example (then the H200's: the code is sm_90 either way).
export ORCH_CUDA_GPU=machines/h200.json
if ! grep -q 'H200' $OUT/gpu.txt && /tmp/ob/orchw optimize examples/tiny_mlp.orch.txt -o /tmp/probe \
  --target cuda --compile-only --gpu this --no-validate >> $OUT/gpu.txt 2>&1; then
  export ORCH_CUDA_GPU=this
fi
echo "planning for: $ORCH_CUDA_GPU" >> $OUT/gpu.txt
ORCH_CUDA_MODELS=transformer-tiny ORCH_CUDA_POLICIES=full bench/cuda_bench.sh /tmp/ob/orchw /tmp/smoke > $OUT/smoke.txt 2>&1
cat /tmp/smoke/transformer-tiny/full.log /tmp/smoke/transformer-tiny/full.run.log >> $OUT/smoke.txt 2>&1
echo "smoke done at $((SECONDS - t0)) s" >> $OUT/smoke.txt
grep -q '^| transformer-tiny | [0-9]' $OUT/smoke.txt || { logs; exit 3; }
if [ "${CONFORMANCE:-0}" = 1 ]; then
  deadline 400 /tmp/ob/orchw conformance /tmp/ob/onnx-node --compiled --target cuda --on-gpu \
    --jobs 14 --timeout 120 > $OUT/conformance.txt 2>&1
  echo "conformance done at $((SECONDS - t0)) s" >> $OUT/conformance.txt
  exit 0
fi
if [ "${GENERATED:-0}" = 1 ]; then
  # Generated code alone (no cuBLAS or cuDNN): shared-memory staging, register tiles and warp
  # reductions validated and timed on the GPU, one policy against the other.
  ORCH_CUDA_OPTIMIZE_FLAGS="--gpu-libraries none" ORCH_CUDA_POLICIES="full operator" \
    ORCH_CUDA_MODELS="transformer-tiny candy efficientvit-b1 bert-base-layer" ORCH_CUDA_JOBS=8 \
    deadline 400 bench/cuda_bench.sh /tmp/ob/orchw /tmp/gen > $OUT/generated.txt 2>&1
  echo "generated done at $((SECONDS - t0)) s" >> $OUT/generated.txt
  logs
  exit 0
fi
if [ "${MEASURED:-0}" = 1 ]; then
  for m in analytic measured; do
    ORCH_CUDA_MEASURE=$([ $m = measured ] && echo 1 || echo 0) ORCH_CUDA_TIMEOUT=240 \
      ORCH_CUDA_MODELS="transformer-tiny candy bert-base-layer" ORCH_CUDA_POLICIES="full operator" \
      deadline 280 bench/cuda_bench.sh /tmp/ob/orchw /tmp/cm-$m >> $OUT/measured.txt 2>&1
    echo "$m done at $((SECONDS - t0)) s" >> $OUT/measured.txt
  done
  tar czf $OUT/logs.tgz --exclude='*.onnx' --exclude='*.bin' --exclude='*.cubin' -C /tmp smoke gen cm-analytic cm-measured 2>/dev/null
  exit 0
fi
M1=$(/tmp/ob/orchw zoo list | awk 'NR > 1 && $1 != "" {print $1}')
ORCH_CUDA_JOBS=${JOBS:-14} ORCH_CUDA_TIMEOUT=${T1:-200} ORCH_CUDA_MODELS="$M1" deadline ${D1:-200} bench/cuda_bench.sh /tmp/ob/orchw /tmp/cb1 > $OUT/b1.txt 2>&1
echo "batch 1 done at $((SECONDS - t0)) s" >> $OUT/b1.txt
logs
M16=$(for m in $M1; do [ "$m" = yolov4 ] || echo "$m:16"; done)
ORCH_CUDA_JOBS=${JOBS:-14} ORCH_CUDA_TIMEOUT=${T16:-200} ORCH_CUDA_UNVALIDATED="operator greedy" ORCH_CUDA_MODELS="$M16" deadline ${D16:-240} bench/cuda_bench.sh /tmp/ob/orchw /tmp/cb16 > $OUT/b16.txt 2>&1
logs
# YOLOv4 at batch 16: the interpreter alone would take minutes (a teraflop): not validated.
ORCH_CUDA_JOBS=3 ORCH_CUDA_TIMEOUT=110 ORCH_CUDA_UNVALIDATED="full operator greedy" ORCH_CUDA_MODELS="yolov4:16" deadline 120 bench/cuda_bench.sh /tmp/ob/orchw /tmp/cb16y >> $OUT/b16.txt 2>&1
echo "batch 16 done at $((SECONDS - t0)) s" >> $OUT/b16.txt
logs
