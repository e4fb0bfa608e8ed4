#!/usr/bin/env python3
"""The one-way dependency rule of tiers.md ("Layout"), checked on every #include "..." of ours.

Each room lists the rooms its files may include; the longest matching room prefix decides.
tools/ and tests/ may include anything. Exit 1 naming each file, line and include that breaks it.
  check_layout.py [--root DIR]        check the tree (default: this file's repository)
  check_layout.py --self-test         prove the check fails on a violating tree
"""
import argparse
import os
import re
import sys
import tempfile

# room -> rooms it may include (itself always). A room is a folder path relative to the root.
ALLOWED = {
    "model": [],
    "pm4": [],                                  # pm4/ includes nothing of ours
    "graph": ["model"],
    "kernels": [],
    "runtime": ["model", "graph"],
    "runtime/cpu": ["model", "graph", "runtime"],
    "vulkan": ["model", "graph", "runtime"],    # never runtime/cpu, kfd/, umq/
    "kfd/device": ["pm4", "kernels"],
    "kfd/sim": ["kfd/device", "pm4", "kernels"],
    "kfd/linux": ["kfd/device"],
    "kfd/tier": ["kfd/device", "runtime", "graph", "model", "pm4", "kernels"],  # never a door
    "umq": ["kfd/device", "kfd/sim", "pm4", "kernels"],                          # never kfd/linux, kfd/tier
}
SOURCES = (".cpp", ".h", ".cc", ".hpp", ".cl", ".comp", ".glsl")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room_of(path, rooms):
    best = None
    for r in rooms:
        if path == r or path.startswith(r + "/"):
            if best is None or len(r) > len(best):
                best = r
    return best


def check(root):
    rooms = list(ALLOWED)
    problems = []
    for top in sorted({r.split("/")[0] for r in rooms}):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root).replace(os.sep, "/")
                src = room_of(rel, rooms)
                if src is None:
                    continue
                with open(full, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if "/" not in target:
                            continue  # same folder or a system-style header
                        dst = room_of(target, rooms)
                        if dst is None or dst == src:
                            continue  # not one of our rooms, or the including room itself
                        if dst not in ALLOWED[src]:
                            problems.append(f"{rel}:{lineno}: {src}/ may not include \"{target}\" ({dst}/); "
                                            f"{src}/ may include: {', '.join(ALLOWED[src]) or 'nothing of ours'}")
    return problems


def self_test():
    with tempfile.TemporaryDirectory() as root:
        def write(rel, text):
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        write("umq/good.cpp", '#include "kfd/device/device.h"\n#include "kfd/sim/sim_queue.h"\n')
        write("kfd/tier/x.h", "#pragma once\n")
        assert not check(root), check(root)
        write("umq/bad.cpp", '#include "kfd/tier/pm4_tier.h"\n')
        write("vulkan/bad.cpp", '#include "runtime/cpu/cpu_tier.h"\n')
        write("pm4/bad.h", '#include "kernels/code_object.h"\n')
        write("kfd/sim/bad.cpp", '#include "kfd/linux/topology.h"\n')
        found = check(root)
        want = ["umq/bad.cpp:1", "vulkan/bad.cpp:1", "pm4/bad.h:1", "kfd/sim/bad.cpp:1"]
        missing = [w for w in want if not any(p.startswith(w) for p in found)]
        if missing or len(found) != len(want):
            print("self-test FAILED: expected violations", want, "got", found)
            return 1
    print("self-test: 4 planted violations caught, the clean tree passes")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    problems = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} include(s) break the one-way layout rule (tiers.md, Layout)")
        return 1
    print("layout: every include follows the one-way rule")
    return 0


if __name__ == "__main__":
    sys.exit(main())
