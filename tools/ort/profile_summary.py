#!/usr/bin/env python3
"""Where the time goes: ONNX Runtime's profile next to an orch module's measured kernels.

    tools/ort/profile_summary.py ORT_PROFILE.json [MODULE_DIR [ORCH_PROFILE.txt]]

ORT_PROFILE.json is what `tools/ort/run_model.js --profile PREFIX` wrote; per-node kernel times
are averaged over the profiled runs and totalled per operator type, convolutions split into
pointwise (1x1), depthwise and the rest by their weights' shape. With MODULE_DIR (an `orch
optimize` output), orch's kernels are totalled the same way, each kernel under the class of the
heaviest primitive it holds (Conv, MatMul, Reduce, ... ; Elementwise/Broadcast last), using the
times measured while tuning (the manifest's cost_us: each kernel alone, at the thread count it
was tuned with). With ORCH_PROFILE.txt, what `orch run MODULE_DIR --repeat N --threads T
--profile --profile-top 0` printed, the times are the kernels' inside the module's runs at T
threads instead: those compare with ONNX Runtime's, which are measured inside its runs.
"""
import collections
import json
import sys

# A fused kernel is named after the first of these it contains: the primitive that dominates.
HEAVY_FIRST = ["prim.Conv", "prim.MatMul", "prim.Resize", "prim.Reduce", "prim.Concat",
               "prim.Transpose", "prim.Pad", "prim.Reshape", "prim.Slice", "prim.Gather"]


def ort_op_class(args):
    """The node's operator type; a Conv's names its kind, from the weights' [M, C/group, k...]."""
    op = args.get("op_name", "?")
    shapes = args.get("input_type_shape", [])
    if op != "Conv" or len(shapes) < 2:
        return op
    weights = next(iter(shapes[1].values()))
    channels = next(iter(shapes[0].values()))[1]
    if weights[1] == 1 and channels > 1:
        return "Conv (depthwise)"
    return "Conv (1x1)" if all(k == 1 for k in weights[2:]) else "Conv (kxk)"


def ort_per_op(path):
    events = json.load(open(path))
    runs = sum(1 for e in events if e.get("cat") == "Session" and e.get("name") == "model_run")
    totals = collections.defaultdict(float)
    nodes = collections.defaultdict(set)
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            op = ort_op_class(e.get("args", {}))
            totals[op] += e["dur"]
            nodes[op].add(e["name"])
    return {op: (len(nodes[op]), us / max(runs, 1)) for op, us in totals.items()}, runs


def in_module_times(path):
    """Kernel name -> us per run, from the table `orch run --profile --profile-top 0` prints."""
    times = {}
    for line in open(path):
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 5 and cells[2] in ("halide", "dnnl", "reference"):
            times[cells[1]] = float(cells[4])
    return times


def orch_per_class(module_dir, measured=None):
    manifest = json.load(open(f"{module_dir}/manifest.json"))
    totals = collections.defaultdict(lambda: [0, 0.0])
    for k in manifest["kernels"]:
        ops = {p["op"] for p in k["primitives"]}
        # An operator kept whole (not a primitive) names its kernel: it is what runs there.
        whole = sorted(op for op in ops if not op.startswith("prim."))
        cls = whole[0] if whole else next((h for h in HEAVY_FIRST if h in ops),
                                          "prim.Elementwise/Broadcast")
        key = f"{cls} ({k['backend']})"
        totals[key][0] += 1
        totals[key][1] += measured[k["name"]] if measured else k.get("cost_us", 0.0)
    return totals


def print_table(title, rows):
    total = sum(us for _, us in rows.values()) or 1.0
    print(f"\n| {title} | kernels | us per run | share |\n|---|---:|---:|---:|")
    for name, (count, us) in sorted(rows.items(), key=lambda kv: -kv[1][1]):
        print(f"| {name} | {count} | {us:.1f} | {100 * us / total:.1f}% |")
    print(f"| total | {sum(c for c, _ in rows.values())} | {total:.1f} | |")


def main():
    if len(sys.argv) not in (2, 3, 4):
        sys.exit(__doc__)
    per_op, runs = ort_per_op(sys.argv[1])
    print_table(f"ONNX Runtime operator ({runs} runs)", per_op)
    if len(sys.argv) == 3:
        print_table("orch kernel class (alone, tuning)", orch_per_class(sys.argv[2]))
    if len(sys.argv) == 4:
        measured = in_module_times(sys.argv[3])
        print_table("orch kernel class (in the module)", orch_per_class(sys.argv[2], measured))


if __name__ == "__main__":
    main()
