"""What the model benches measure memory with (bench_gpt, bench_gemma): this process's smaps_rollup in MB, and two
processes holding their model at the same time, so the shared (memory-mapped) pages show as shared."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def load_line() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


def smaps_mb() -> dict[str, float]:
    """-> this process's {"rss", "pss", "private", "shared"} in MB (/proc/self/smaps_rollup)."""
    fields = {}
    with open("/proc/self/smaps_rollup", encoding="ascii") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and parts[2] == "kB":
                fields[parts[0].rstrip(":")] = int(parts[1]) / 1024
    return {"rss": round(fields["Rss"], 1), "pss": round(fields["Pss"], 1),
            "private": round(fields["Private_Clean"] + fields["Private_Dirty"], 1),
            "shared": round(fields["Shared_Clean"] + fields["Shared_Dirty"], 1)}


def wait_while_held(hold: str, ready: str) -> dict[str, float]:
    """In a child: say it is ready, wait while ``hold`` exists (the other child loads meanwhile) -> smaps_mb() then,
    both children running."""
    Path(ready).touch()
    while os.path.exists(hold):
        time.sleep(0.05)
    return smaps_mb()


def two_children(module: str) -> list[dict]:
    """Run ``python -m <module> --memory-child HOLD READY`` twice at once; once both are ready, let them go -> the JSON
    each printed."""
    folder = tempfile.mkdtemp(prefix="bench-memory-")
    hold = os.path.join(folder, "hold")
    Path(hold).touch()
    children = []
    for i in range(2):
        ready = os.path.join(folder, f"ready{i}")
        children.append((ready, subprocess.Popen([sys.executable, "-m", module, "--memory-child", hold, ready],
                                                 stdout=subprocess.PIPE, text=True)))
    while not all(os.path.exists(ready) for ready, _ in children):
        time.sleep(0.1)
    os.remove(hold)
    return [json.loads(child.communicate()[0]) for _, child in children]
