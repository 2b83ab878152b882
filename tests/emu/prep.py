#!/usr/bin/env python3
"""prep.py: rewrites a shared reference header (problems/shared/*.cuh) so that the host C++ of
tests/emu/cuda_emu.h compiles it: the inline PTX becomes cuda_emu.h's C++ (copy4's cp.async ->
emu_copy4, mm_dmma's and attention's dmma's MMA -> emu_mma, cp.async's wait and commit -> nothing: the copies are
synchronous), `extern __shared__ T s[];` points at the emulator's dynamic shared memory, and
`#pragma unroll` goes. Refuses (exit 1) a header with inline PTX it does not know, so an
emulated check never runs code other than the kernel's.

    python3 tests/emu/prep.py IN.cuh OUT.cuh
"""
import re
import sys

# functions whose whole body is one piece of PTX, and what the emulator puts in its place
PTX_FUNCTIONS = {
    "copy4": "{ emu_copy4(dst, src, ok); }",
    "mm_dmma": "{ emu_mma(c, a, b); }",
    "dmma": "{ emu_mma(c, a, b); }",
}
# PTX statements that become nothing (the copies are done when issued)
PTX_NOOPS = re.compile(r'asm\s+volatile\s*\(\s*"cp\.async\.(wait_all|commit_group);"\s*:::\s*"memory"\s*\)\s*;')


def replace_body(text, name, body):
    """The body of function `name` (its first definition) replaced by `body`."""
    m = re.search(r"\b%s\s*\([^;{]*\)\s*\{" % re.escape(name), text)
    if not m:
        return text
    depth, i = 1, m.end()
    while depth:
        if i >= len(text):
            sys.exit("prep.py: unbalanced braces in %s" % name)
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    return text[:m.end() - 1] + body + text[i:]


def prep(text):
    for name, body in PTX_FUNCTIONS.items():
        text = replace_body(text, name, body)
    text = PTX_NOOPS.sub(";", text)
    text = re.sub(r"extern\s+__shared__\s+(\w+)\s+(\w+)\s*\[\s*\]\s*;",
                  r"\1 *\2 = (\1 *)emu_dynamic_smem;", text)
    text = re.sub(r"^\s*#pragma unroll.*$", "", text, flags=re.M)
    left = re.search(r"\basm\b.*", text)
    if left:
        sys.exit("prep.py: inline PTX the emulator does not model: %s" % left.group(0).strip())
    return text


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        text = f.read()
    with open(sys.argv[2], "w") as f:
        f.write("// %s rewritten for tests/emu/cuda_emu.h by tests/emu/prep.py\n" % sys.argv[1])
        f.write(prep(text))


if __name__ == "__main__":
    main()
