# SPDX-License-Identifier: MIT
"""What scripts/bench-models and scripts/ab-models share: a zoo model's
input shapes as vnpu-bench's -shape takes them, and the round trip of a
cache line between the first two CPUs."""
import os
import subprocess


def shapes(model):
    """A manifest entry's inputs as vnpu-bench -shape NAME[D,D],NAME[D]."""
    return ",".join(f"{i['name']}[{','.join(map(str, i['shape']))}]" for i in model["inputs"])


def round_trip_ns(kbenches):
    """The first two CPUs' round trip now, in ns, from the first of
    kbenches (vnpu-kbench paths) that measures it (an older build has no
    --round-trip); None with one CPU or when none can.  A figure beside
    latencies, never a reason to stop."""
    if (os.cpu_count() or 1) < 2:
        return None
    for kbench in kbenches:
        if not os.access(kbench, os.X_OK):
            continue
        p = subprocess.run([kbench, "--round-trip", "--rounds", "1"], capture_output=True,
                           text=True)
        for line in p.stdout.splitlines():
            if line.startswith("round trip CPU") and " ns " in line:
                return float(line.split(": ", 1)[1].split(" ns", 1)[0])
    return None
