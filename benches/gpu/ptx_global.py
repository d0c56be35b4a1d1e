#!/usr/bin/env python3
"""node-bench's experiment (issue 30, point 2): a copy of a linked PTX module in which the
generic loads and stores of the named entries address the global state space.

    ptx_global.py IN.ptx OUT.ptx [--nc] ENTRY...

`ld.f32 %f1, [%rd4];` becomes `ld.global.f32 ...` (`ld.global.nc.f32` with --nc) and
`st.f32` becomes `st.global.f32`, in the bodies of ENTRY only. Valid for kernels whose
generic accesses all reach global memory (vecadd's slices, from the host's allocations);
it measures what the state space costs, it is no transformation for general use.
"""
import re
import sys

SPACES = ("param", "shared", "global", "local", "const", "volatile", "relaxed", "acquire",
          "release", "weak", "mmio")


def rewrite(line, nc):
    def sub(m):
        op, rest = m.group(1), m.group(2)
        if rest.split(".", 1)[0] in SPACES:
            return m.group(0)
        space = "global.nc." if (op == "ld" and nc) else "global."
        return f"{op}.{space}{rest}"
    return re.sub(r"\b(ld|st)\.([a-z0-9.]+)", sub, line)


def main():
    args = sys.argv[1:]
    nc = "--nc" in args
    args = [a for a in args if a != "--nc"]
    src, dst, entries = args[0], args[1], set(args[2:])
    out, inside, changed = [], False, 0
    for line in open(src):
        m = re.match(r"\s*\.visible \.entry (\w+)\(", line)
        if m:
            inside = m.group(1) in entries
        elif re.match(r"\s*\.(visible|weak|extern)?\s*\.?(func|entry)\b", line):
            inside = False
        if inside:
            new = rewrite(line, nc)
            changed += new != line
            line = new
        out.append(line)
    open(dst, "w").write("".join(out))
    print(f"{dst}: {changed} loads and stores rewritten in {sorted(entries)}")


main()
