#!/usr/bin/env bash
# Packs orch for a GPU machine that lacks the Debian packages it links (the device machines of
# issue #15 have CUDA, not Halide, oneDNN or CBC): the orch binary, every library it loads, and
# a wrapper, as one .tar.xz small enough to travel with the working tree (about 18 MB).
#
#   tools/cuda/carry_bundle.sh [BUILD_DIR] [OUT.tar.xz]   (default build, .gpu/bundle.tar.xz)
#
# There: `tar xJf bundle.tar.xz -C DIR` and run DIR/orchw like orch (ORCH_EXTRA_LIBS: folders of
# libnvrtc.so.13 and libcuda.so.1). libHalide is replaced by a stub whose functions return 0:
# the real one needs LLVM 14 (110 MB, 60 MB compressed with the rest, over the 64 MiB a working
# tree may carry), and the CUDA path never calls Halide; the stub's functions do run, from
# static initializers, which is why they return instead of trapping. Use it for
# --target cuda only: the CPU target's Halide kernels cannot be built with it.
set -euo pipefail
build=${1:-build}
out=${2:-.gpu/bundle.tar.xz}
orch="$build/tools/orch/orch"
[ -x "$orch" ] || { echo "carry_bundle: no $orch (build first: ./run build)" >&2; exit 2; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/slim/glibc"
# Every library orch loads, by name, and the ones it still needs with Halide stubbed: its direct
# needs but Halide, and theirs (Halide's LLVM, z3, ICU and libxml2 stay behind).
declare -A path
while read -r name file; do path[$name]=$file; done < <(ldd "$orch" | awk '/=> \//{print $1, $3}')
halide=""
keep=()
for name in $(readelf -d "$orch" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
  case $name in
    libHalide*) halide=${path[$name]} ;;
    *) keep+=("$name" $(ldd "${path[$name]}" | awk '/=> \//{print $1}')) ;;
  esac
done
[ -n "$halide" ] || { echo "carry_bundle: $orch does not link libHalide" >&2; exit 2; }
for name in $(printf '%s\n' "${keep[@]}" | sort -u); do
  case $name in
    # glibc goes apart, below: used only where the machine's own is older than the build's.
    libc.so* | libm.so* | libpthread.so* | libdl.so* | librt.so*) ;;
    *) cp -L "${path[$name]}" "$stage/slim/" ;;
  esac
done
# The loader, and the parts of glibc that orch, libnvrtc and libcuda load.
cp -L "$(ldd "$orch" | awk '/ld-linux/{print $1}' | tail -n 1)" "$stage/slim/glibc/"
for lib in libc.so.6 libm.so.6 libpthread.so.0 librt.so.1 libdl.so.2; do
  cp -L "/lib/x86_64-linux-gnu/$lib" "$stage/slim/glibc/"
done
nm -D --undefined-only "$orch" | awk '{print $2}' | sort -u >"$stage/undefined"
nm -D --defined-only "$halide" | awk 'NF == 3 && $2 == "T" {print $3}' | sort -u |
  comm -12 - "$stage/undefined" |
  awk 'BEGIN {print ".text"} {printf ".globl %s\n.type %s,@function\n%s:\n  xor %%eax, %%eax\n  ret\n", $1, $1, $1}' \
    >"$stage/halide_stub.s"
gcc -shared -nostdlib -Wl,-soname,"$(basename "$halide")" -o "$stage/slim/$(basename "$halide")" \
  "$stage/halide_stub.s"
cp "$orch" "$stage/orch"
cp "$(dirname "$0")/orchw" "$stage/orchw"
# Debian's ONNX node tests, for `orch conformance --compiled --target cuda --on-gpu` there
# (device_run.sh, CONFORMANCE=1); the device machines do not have the package.
mkdir -p "$stage/onnx-node"
node_tests=/usr/share/libonnx-testdata/data/node
[ -d "$node_tests" ] && cp -r "$node_tests/." "$stage/onnx-node/"
mkdir -p "$(dirname "$out")"
tar cf - -C "$stage" slim orch orchw onnx-node | xz -T0 -6 >"$out"
echo "wrote $out ($(du -h "$out" | cut -f1)): $(ls "$stage/slim" | wc -l) libraries, Halide stubbed"
