#!/usr/bin/env python3
"""No kernel of the embedded code objects executes fp64 (1/32 rate on RDNA3 consumer parts,
less on RDNA4): disassemble each code object with llvm-objdump and fail naming every function
(kernel, or a function kernels call) that holds an instruction on f64 operands.

usage: no_fp64.py LLVM_OBJDUMP --fixture FIXTURE.hsaco CODE_OBJECT.hsaco...
FIXTURE holds a kernel `uses_fp64`: it must be named, or this check could never fail."""
import re
import subprocess
import sys

SYMBOL = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")
F64 = re.compile(r"^\s+([a-z0-9_]*_f64(?:_e32|_e64|_dpp|_sdwa)?)\b")


def fp64_by_function(objdump, path):
    """{function: [first instruction text, count]} for every function with an f64 instruction."""
    text = subprocess.run([objdump, "-d", path], check=True, capture_output=True, text=True).stdout
    found, function = {}, "(before any symbol)"
    for line in text.splitlines():
        m = SYMBOL.match(line)
        if m:
            function = m.group(1)
            continue
        if F64.match(line):
            entry = found.setdefault(function, [line.split("//")[0].strip(), 0])
            entry[1] += 1
    return found


def main(argv):
    objdump, rest = argv[1], argv[2:]
    fixture = rest[rest.index("--fixture") + 1]
    objects = [p for i, p in enumerate(rest) if p != "--fixture" and (i == 0 or rest[i - 1] != "--fixture")]
    if "uses_fp64" not in fp64_by_function(objdump, fixture):
        print(f"{fixture}: kernel uses_fp64 was not found to use fp64: the check itself is broken")
        return 1
    failed = False
    for path in objects:
        for function, (first, count) in sorted(fp64_by_function(objdump, path).items()):
            print(f"{path}: {function} executes {count} fp64 instruction(s), first: {first}")
            failed = True
    if not failed:
        print(f"no fp64 instruction in: {' '.join(objects)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
