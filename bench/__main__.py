"""`python -m bench`: cold start, one student per page, cache misses, a guided class and N concurrent students.

    .venv/bin/python -m bench --phases miss,guided,load         # the targets' run (docs/performance.md)
    .venv/bin/python -m bench                                   # every phase
    .venv/bin/python -m bench --phases load --students 3 --duration 10   # a short check
    .venv/bin/python -m bench --pages scaling,glove --phases miss --miss-rounds 3
    .venv/bin/python -m bench --server-option runner.postScriptGC=true   # the old default, to compare
    .venv/bin/python -m bench.bench_gpt                         # the GPT lesson: maps, batched generation, memory

It starts `streamlit run bench/empty_app.py` and `streamlit run streamlit_app.py` on free loopback
ports (one after the other, never two at once; the miss passes and the guided class each get a fresh
server), drives them through Streamlit's websocket protocol (bench/protocol.py), and writes
bench/results/<time>/results.json and summary.md, plus bench/results/latest.json and latest.md.
See docs/performance.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

from bench import guided, load, miss, miss_report, report
from bench.server import (
    APP_SCRIPT, EMPTY_SCRIPT, PRODUCTION_OPTIONS, ROOT, StreamlitServer, read_proc_cpu_s, wait_until_idle,
)

PHASES = ("cold", "single", "miss", "guided", "load")


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--students", type=int, default=40, help="concurrent virtual students (default 40)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of concurrent load (default 60)")
    ap.add_argument("--think", type=float, default=1.0, help="mean seconds between a student's interactions")
    ap.add_argument("--ramp", type=float, default=5.0, help="seconds over which the students arrive")
    ap.add_argument("--pages", default="", help="comma-separated url paths, e.g. home,rnn,glove "
                    "(default: every page in the app's navigation; home or / = the default page)")
    ap.add_argument("--phases", default=",".join(PHASES), help=f"which of {','.join(PHASES)} to run")
    ap.add_argument("--reruns", type=int, default=30, help="single user: reruns at default settings per page")
    ap.add_argument("--interactions", type=int, default=30, help="single user: widget changes per page")
    ap.add_argument("--miss-rounds", type=int, default=4,
                    help="miss phase: unseen values per widget and page, in each of the two passes (default 4)")
    ap.add_argument("--long-actions", default=",".join(report.LONG_ACTIONS),
                    help="widget keys of explicitly long actions (training, a streamed generation, a timed "
                         "measurement): held to 2 s instead of 150 ms in the miss phase, reported apart in the others")
    ap.add_argument("--guided-file", default=str(guided.GUIDED_FILE), help="guided class: the steps per page")
    ap.add_argument("--guided-pause", default="3,8", help="guided class: seconds between a student's steps, lo,hi")
    ap.add_argument("--guided-students", type=int, default=None, help="guided class: students (default --students)")
    ap.add_argument("--cold-page", default="glove", help="url path of the page whose first run ends the cold start")
    ap.add_argument("--server-option", action="append", default=[], metavar="KEY=VALUE",
                    help="extra `streamlit run --KEY VALUE` for both servers, e.g. runner.postScriptGC=true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds before a run counts as an error")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"), help="results folder (default bench/results)")
    ap.add_argument("--note", default="", help="a line printed at the top of the summary (e.g. PRELIMINARY)")
    ap.add_argument("--strict", action="store_true", help="exit 1 when a measured target fails")
    return ap.parse_args(argv)


def _server_options(pairs: list[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--server-option needs KEY=VALUE, got {pair!r}")
        options[key.strip()] = value.strip()
    return options


def _records(records) -> list[dict]:
    return [r.__dict__ for r in records]


async def _single_user_all(url: str, pages: list[str], args, read_memory, interactions: int | None = None) -> dict:
    """Each page alone in its own session, with the server's RSS sampled every 50 ms meanwhile."""
    summaries = {}
    for i, page in enumerate(pages):
        stop = asyncio.Event()
        t0 = time.perf_counter()
        sampler = asyncio.create_task(load.sample_memory(read_memory, t0, stop, every_s=0.05))
        try:
            recs = await load.single_user(
                url, page, reruns=args.reruns, interactions=args.interactions if interactions is None else interactions,
                seed=args.seed + i, timeout=args.timeout)
        finally:
            stop.set()
            memory = await sampler
        label = load.page_label(page)
        summaries[label] = s = report.page_summary(_records(recs))
        rss = [m["rss_mb"] for m in memory]
        s["rss_mb"] = {"before": rss[0], "peak": max(rss), "after": rss[-1]} if rss else None
        widget = f", widget p95 {s['widget']['p95_ms']} ms" if s["widget"]["n"] else ""
        print(f"  {label:16s} rerun p95 {s['rerun']['p95_ms']} ms{widget}, errors {s['errors'] or 0}", flush=True)
    return summaries


def _pages(url: str, args) -> list[str]:
    all_pages = asyncio.run(load.discover_pages(url, timeout=args.timeout))
    requested = [p for p in args.pages.split(",") if p.strip()]
    try:
        return load.resolve_pages(requested, all_pages) if requested else all_pages
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def _fresh_app(options, log_path: Path) -> StreamlitServer:
    return StreamlitServer(APP_SCRIPT, options=options, log_path=log_path)


def _miss_phase(options, args, out_dir: Path) -> dict:
    """Two fresh servers, presenter mode off and on, driven change by change with the same unseen values."""
    print("miss: one student, every lesson widget, unseen values, presenter off and on (two fresh servers)", flush=True)
    with _fresh_app(options, out_dir / "server-miss-off.log") as off, \
            _fresh_app(options, out_dir / "server-miss-on.log") as on:
        off.wait_healthy(timeout=90)
        on.wait_healthy(timeout=90)
        pages = _pages(off.url, args)
        if _pages(on.url, args) != pages:  # a first run on each: both start their start-up work before the student
            raise SystemExit("the two fresh servers list different pages")
        settled = wait_until_idle([off.pid, on.pid])  # the misses are measured after the start-up, as a class meets it
        print(f"  both servers idle {settled:.1f} s after their first run", flush=True)
        lanes = [miss.Lane("off", off.url, lambda: read_proc_cpu_s(off.pid)),
                 miss.Lane("on", on.url, lambda: read_proc_cpu_s(on.pid))]
        passes = asyncio.run(miss.miss_passes(lanes, pages, per_widget=args.miss_rounds, seed=args.seed,
                                              timeout=args.timeout))
        tracebacks = off.log_tracebacks() + on.log_tracebacks()
    (out_dir / "miss-records.json").write_text(json.dumps({k: v["records"] for k, v in passes.items()}))
    long_actions = tuple(k.strip() for k in args.long_actions.split(",") if k.strip())
    summary = miss_report.miss_summary(passes["off"], passes["on"], long_actions)
    summary["server_tracebacks"] = tracebacks
    summary["settled_s"] = settled
    return summary


def _guided_phase(options, args, out_dir: Path) -> dict:
    lo, _, hi = args.guided_pause.partition(",")
    pause = (float(lo), float(hi or lo))
    students = args.guided_students or args.students
    steps = guided.load_steps(Path(args.guided_file))
    print(f"guided: {students} students follow bench/guided.toml, pauses {pause[0]:g}-{pause[1]:g} s (fresh server)",
          flush=True)
    with _fresh_app(options, out_dir / "server-guided.log") as app:
        app.wait_healthy(timeout=90)
        pages = _pages(app.url, args)
        # the class arrives after the start-up work (lesson 8's results, lesson 9's study), as a class meets a server
        # its teacher started before the lesson; the cold phase measures the start itself
        settled = wait_until_idle([app.pid])
        print(f"  server idle {settled:.1f} s after its first run", flush=True)
        raw = asyncio.run(guided.guided_class(app.url, pages, steps, students=students, pause_s=pause,
                                              seed=args.seed, timeout_s=args.timeout, read_memory=app.memory))
        tracebacks = app.log_tracebacks()
    (out_dir / "guided-records.json").write_text(json.dumps(raw["records"]))
    summary = guided.guided_summary(raw, tuple(k.strip() for k in args.long_actions.split(",") if k.strip()))
    summary["server_tracebacks"] = tracebacks
    summary["settled_s"] = settled
    return summary


def run(args: argparse.Namespace, argv: list[str]) -> dict:
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    unknown = set(phases) - set(PHASES)
    if unknown:
        raise SystemExit(f"unknown phase(s) {sorted(unknown)}; choose from {PHASES}")
    options = {**PRODUCTION_OPTIONS, **_server_options(args.server_option)}
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_root = Path(args.out)
    out_dir = out_root / stamp
    out_dir.mkdir(parents=True, exist_ok=True)
    results: dict = {"meta": report.run_meta("python -m bench", argv, options, args.note), "cold_start": {},
                     "single_user": None, "miss": None, "guided": None, "concurrent": None}

    # 1. The framework's floor: an empty page, alone on its own server.
    if "cold" in phases or "single" in phases:
        print("empty page (bench/empty_app.py)", flush=True)
        with StreamlitServer(EMPTY_SCRIPT, options=options, log_path=out_dir / "server-empty.log") as empty:
            results["cold_start"]["empty"] = asyncio.run(load.cold_start(empty.url, empty.started_at, ""))
            if "single" in phases:
                floor = asyncio.run(_single_user_all(empty.url, [""], args, empty.memory, interactions=0))
                results["single_user"] = {"empty": floor["/"], "pages": {}}
        if "cold" not in phases:
            results["cold_start"] = {}

    # 2. Cache misses: one student, fresh servers, presenter off and on.
    if "miss" in phases:
        results["miss"] = _miss_phase(options, args, out_dir)
    # 3. The guided class: everyone follows "What to try", on a fresh server.
    if "guided" in phases:
        results["guided"] = _guided_phase(options, args, out_dir)
    if not {"cold", "single", "load"} & set(phases):
        results["targets"] = report.check_targets(results)
        return _finish(results, out_dir, out_root)

    # 4. The app: cold start, then each page alone, then the class with random widgets.
    print("app (streamlit_app.py)", flush=True)
    with StreamlitServer(APP_SCRIPT, options=options, log_path=out_dir / "server-app.log") as app:
        cold = asyncio.run(load.cold_start(app.url, app.started_at, args.cold_page))
        if "cold" in phases:
            results["cold_start"]["app"] = cold
            print(f"  cold start to first '{args.cold_page}' run: {cold['start_to_page_s']} s "
                  f"errors {cold['errors'] or 0}", flush=True)
        pages = _pages(app.url, args)
        results["meta"]["pages"] = [load.page_label(p) for p in pages]
        if "single" in phases:
            results["single_user"] = results["single_user"] or {"empty": None, "pages": {}}
            results["single_user"]["pages"] = asyncio.run(_single_user_all(app.url, pages, args, app.memory))
        if "load" in phases:
            cfg = load.LoadConfig(students=args.students, duration_s=args.duration, think_s=args.think,
                                  ramp_s=args.ramp, timeout_s=args.timeout, seed=args.seed, pages=pages,
                                  long_actions=tuple(k.strip() for k in args.long_actions.split(",") if k.strip()))
            print(f"  {cfg.students} students for {cfg.duration_s:g} s (+{cfg.ramp_s:g} s ramp)...", flush=True)
            raw = asyncio.run(load.concurrent_students(app.url, cfg, app.memory))
            raw["records"] = _records(raw["records"])
            raw["long_actions"] = [k.strip() for k in args.long_actions.split(",") if k.strip()]
            summary = report.load_summary(raw)
            summary["server_tracebacks"] = app.log_tracebacks()
            results["concurrent"] = summary
            (out_dir / "load-records.json").write_text(json.dumps(raw["records"]))
        results["meta"]["server_tracebacks"] = app.log_tracebacks()
        results["meta"]["server_peak_rss_mb"] = round(app.memory().get("VmHWM", 0) / 2**20, 1)

    results["targets"] = report.check_targets(results)
    return _finish(results, out_dir, out_root)


def _finish(results: dict, out_dir: Path, out_root: Path) -> dict:
    json_path, md_path = report.write(results, out_dir, latest_dir=out_root)
    print()
    print(md_path.read_text())
    print(f"written: {json_path}\n         {md_path}\n         {out_root / 'latest.md'}")
    return results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    results = run(args, argv)
    failed = [c for c in results["targets"] if c["ok"] is False]
    return 1 if (args.strict and failed) else 0


if __name__ == "__main__":
    sys.exit(main())
