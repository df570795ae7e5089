"""`python -m bench.profile`: where the server's time goes while one student walks through the pages.

    .venv/bin/pip install py-spy          # not a project requirement; only this tool uses it
    .venv/bin/python -m bench.profile --pages scaling,glove --interactions 20
    .venv/bin/python -m bench.profile --students 40 --duration 30   # where the time goes under a class's load

It starts the app like `python -m bench`, attaches py-spy to the server process (200 Hz, only the
thread holding the GIL: one server process runs Python on one core at a time, so GIL time is the
budget every student shares), runs the single-user scenario on the chosen pages, and prints the
functions with the most samples, inclusive and exclusive, plus a split by area (the app's own
code, Plotly, Streamlit, the full GC that Streamlit runs after each script run). The raw collapsed stacks go to
bench/results/<time>-profile/stacks.txt (feed them to flamegraph.pl or speedscope).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bench import load
from bench.server import APP_SCRIPT, PRODUCTION_OPTIONS, ROOT, StreamlitServer

FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^()]*?)(?::\d+)?\)$")
AREAS = [  # first match wins, tested against the innermost frame that is not in a library we skip
    ("gc after each run (runner.postScriptGC)", lambda f, fn: fn.endswith("script_runner.py") and f.endswith("_on_script_finished")),
    ("app: lessons/", lambda f, fn: "/lessons/" in fn),
    ("app: charts/", lambda f, fn: "/charts/" in fn),
    ("app: attention_core/", lambda f, fn: "/attention_core/" in fn),
    ("app: ui/ + entry", lambda f, fn: "/ui/" in fn or fn.endswith("streamlit_app.py")),
    ("plotly (figure building, validation, JSON)", lambda f, fn: "/plotly/" in fn or "/_plotly_utils/" in fn),
    ("numpy / pandas / pyarrow", lambda f, fn: any(k in fn for k in ("/numpy/", "/pandas/", "/pyarrow/"))),
    ("protobuf / hashing of messages", lambda f, fn: "/google/protobuf/" in fn or fn.endswith("forward_msg_cache.py")),
    ("streamlit (runtime, elements, caching)", lambda f, fn: "/streamlit/" in fn),
]


def parse_frame(frame: str) -> tuple[str, str]:
    m = FRAME.match(frame.strip())
    return (m["func"], m["file"]) if m else (frame.strip(), "")


def analyse(stacks_path: Path, top: int = 25) -> str:
    inclusive, exclusive, areas = Counter(), Counter(), Counter()
    total = 0
    for line in stacks_path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [parse_frame(f) for f in stack.split(";") if f.strip()]
        if not frames:
            continue
        total += n
        for key in set(frames):
            inclusive[key] += n
        exclusive[frames[-1]] += n
        area = "other (event loop, websocket I/O, interpreter)"
        for func, file in reversed(frames):
            hit = next((name for name, test in AREAS if test(func, file)), None)
            if hit:
                area = hit
                break
        areas[area] += n
    if not total:
        return "no samples (was the server busy?)"

    def short(key):
        func, file = key
        return f"{func} ({file.replace(str(ROOT) + '/', '').split('site-packages/')[-1]})"

    out = [f"{total} samples", "", "By area (innermost recognised frame):"]
    out += [f"  {100 * n / total:5.1f}%  {name}" for name, n in areas.most_common()]
    out += ["", "Inclusive (the function or anything it calls):"]
    out += [f"  {100 * n / total:5.1f}%  {short(k)}" for k, n in inclusive.most_common(top)]
    out += ["", "Exclusive (the function itself):"]
    out += [f"  {100 * n / total:5.1f}%  {short(k)}" for k, n in exclusive.most_common(top)]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.profile", description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", default="", help="comma-separated url paths (default: all)")
    ap.add_argument("--reruns", type=int, default=10)
    ap.add_argument("--interactions", type=int, default=20)
    ap.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    ap.add_argument("--students", type=int, default=0,
                    help="profile the load phase instead: this many concurrent students (e.g. 40)")
    ap.add_argument("--duration", type=float, default=30.0, help="seconds of load with --students")
    ap.add_argument("--all-threads", action="store_true",
                    help="sample every running thread (NumPy and I/O outside the GIL too), not only the GIL holder")
    ap.add_argument("--server-option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra `streamlit run --KEY VALUE`, e.g. runner.postScriptGC=true")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    options = {**PRODUCTION_OPTIONS, **dict(o.split("=", 1) for o in args.server_option)}
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        raise SystemExit("py-spy is not installed: .venv/bin/pip install py-spy")
    out_dir = Path(args.out) / (time.strftime("%Y%m%d-%H%M%S") + "-profile")
    out_dir.mkdir(parents=True, exist_ok=True)
    stacks = out_dir / "stacks.txt"
    with StreamlitServer(APP_SCRIPT, options=options, log_path=out_dir / "server.log") as server:
        server.wait_healthy()
        all_pages = asyncio.run(load.discover_pages(server.url))
        requested = [p for p in args.pages.split(",") if p.strip()]
        pages = load.resolve_pages(requested, all_pages) if requested else all_pages
        for page in pages:  # first runs (imports, caches) are not what we profile
            asyncio.run(load.single_user(server.url, page, reruns=0, interactions=0, seed=0))
        spy_proc = subprocess.Popen([spy, "record", "--pid", str(server.pid), "--rate", str(args.rate), "--format", "raw",
                                     "--output", str(stacks), *([] if args.all_threads else ["--gil"]), "--full-filenames", "--nonblocking"],
                                    stdout=subprocess.DEVNULL, stderr=open(out_dir / "py-spy.log", "w"))
        time.sleep(1.0)  # py-spy attaches
        if args.students:
            cfg = load.LoadConfig(students=args.students, duration_s=args.duration, pages=pages)
            result = asyncio.run(load.concurrent_students(server.url, cfg))
            print(f"{len(result['records'])} runs in {result['wall_s']} s under load")
        else:
            for i, page in enumerate(pages):
                asyncio.run(load.single_user(server.url, page, reruns=args.reruns, interactions=args.interactions,
                                             seed=i))
        spy_proc.send_signal(2)  # SIGINT: py-spy writes its output and exits
        spy_proc.wait(timeout=30)
    report = analyse(stacks)
    (out_dir / "profile.txt").write_text(report + "\n")
    print(report)
    print(f"\nwritten: {stacks}\n         {out_dir / 'profile.txt'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
