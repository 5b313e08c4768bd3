#!/usr/bin/env python3
"""Where the heap allocations of one remote round trip come from, per process.

Reads two callgrind profiles of the same process (`LOW.cg`, `HIGH.cg`, taken after LOW and HIGH
round trips) that were recorded with `--separate-callers14=malloc` (and the same for calloc,
realloc, posix_memalign, memalign, aligned_alloc): callgrind then keeps each allocation
function's calls apart by their last 14 callers, with exact call counts. The difference of the
two profiles divided by (HIGH - LOW) is what one round trip allocates, without start-up; each
line is a call chain (allocation function first, then its callers), cut to DEPTH callers.
`Benchmarks/allocation-sites.sh` records the profiles and calls this.

    allocation-sites.py LOW.cg HIGH.cg LOW HIGH [DEPTH]
"""
import collections
import re
import subprocess
import sys

ALLOCATORS = ("malloc", "calloc", "realloc", "posix_memalign", "memalign", "aligned_alloc")


def calls_per_chain(path):
    """Calls into each separated allocation context of a callgrind file (name compression on)."""
    names, counts, callee = {}, collections.Counter(), None
    with open(path, errors="replace") as profile:
        for line in profile:
            if line.startswith(("cfn=", "fn=")):
                match = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if match.group(2) is not None:
                    names[match.group(1)] = match.group(2)
                callee = names.get(match.group(1)) if line.startswith("cfn=") else None
            elif line.startswith("calls=") and callee is not None:
                if callee.split("'")[0] in ALLOCATORS:
                    counts[callee] += int(line[6:].split()[0])
                callee = None
    return counts


def main():
    low, high = calls_per_chain(sys.argv[1]), calls_per_chain(sys.argv[2])
    span = int(sys.argv[4]) - int(sys.argv[3])
    depth = int(sys.argv[5]) if len(sys.argv) > 5 else 8
    chains = collections.Counter()
    for chain in set(low) | set(high):
        if high[chain] != low[chain]:
            chains["'".join(chain.split("'")[: depth + 1])] += high[chain] - low[chain]
    rows = [(chain, count / span) for chain, count in chains.most_common() if count / span >= 0.2]
    demangled = subprocess.run(
        ["swift-demangle", "--simplified", "--compact"],
        input="".join(chain.replace("'", "\n") + "\n====\n" for chain, _ in rows),
        capture_output=True, text=True).stdout.split("====\n")
    print(f"allocations per round trip: {sum(chains.values()) / span:.2f}")
    for (_, count), frames in zip(rows, demangled):
        print(f"{count:6.2f}  " + "  <-  ".join(frame for frame in frames.strip().split("\n") if frame))


if __name__ == "__main__":
    main()
