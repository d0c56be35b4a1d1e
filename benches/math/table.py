#!/usr/bin/env python3
"""Markdown tables for a run's entry in benches/LOG.md from a math-bench log
(LOG_DIR/math.txt of scripts/gpu-math.sh): one row per function with our maximum
error, CUDA's measured and documented one, and the speed ratio to nvcc, then the
summary line; BENCHMARKS.md ("Math library", "Math library, every function") takes its
figures from there.

    python3 benches/math/table.py LOG_DIR/math.txt
"""
import re
import sys


def main(path):
    text = open(path).read().splitlines()
    acc, speed, section = {}, {}, None
    for line in text:
        if line.startswith("f32 unary") or line.startswith("f32 binary"):
            section = "f32"
        elif line.startswith("f64 unary") or line.startswith("f64 binary"):
            section = "f64"
        elif line.startswith("throughput:"):
            section = "speed"
        elif line.startswith("function") or not line.strip():
            continue
        elif section in ("f32", "f64"):
            w = line.split()
            if len(w) < 6 or not re.match(r"^[a-z0-9_]+$", w[0]):
                continue
            name, ours = w[0], w[1]
            at = "" if w[2] == "-" else w[2]
            if section == "f32":
                m = re.search(r"\)\s+([0-9.]+)\s+(\d+)\s+(yes|NO)", line)
                if m:
                    acc[name] = (section, ours, at, m.group(1), m.group(2), m.group(3))
            else:
                m = re.search(r"\s+(\d+)\s+(\d+)\s+(yes|NO)", line)
                if m:
                    acc[name] = (section, ours, at, m.group(1), m.group(2), m.group(3))
        elif section == "speed":
            w = line.split()
            if len(w) == 4 and re.match(r"^[0-9.]+$", w[3]):
                speed[name_key(w[0])] = (w[1], w[2], w[3])
    print("| function | ours: max ulp | at input | CUDA's measured max ulp | CUDA's bound | within | ours ms | nvcc ms | nvcc/ours |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (sec, ours, at, cuda, bound, within) in acc.items():
        sp = speed.get(name, ("-", "-", "-"))
        if sec == "f64":
            ours = f"{ours} (diff. to CUDA)"
            cuda = f"{cuda} results differ"
        print(f"| `{name}` | {ours} | `{at}` | {cuda} | {bound} | {within} | {sp[0]} | {sp[1]} | {sp[2]} |")
    for line in text:
        if line.startswith("math bars:"):
            print()
            print(line)


def name_key(s):
    return s


if __name__ == "__main__":
    main(sys.argv[1])
