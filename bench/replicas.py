"""`python -m bench.replicas`: two replicas behind HAProxy with sticky sessions, checked under load.

    .venv/bin/python -m bench.replicas                        # HAProxy, 40 students, 60 s per phase
    .venv/bin/python -m bench.replicas --students 4 --duration 10
    .venv/bin/python -m bench.replicas --no-sticky --no-baseline --duration 20   # control: must FAIL

It starts two `streamlit run streamlit_app.py` on loopback ports with one shared
STREAMLIT_SERVER_COOKIE_SECRET, and HAProxy (Debian package; `apt-get install -y haproxy`) with the project's
own deploy/haproxy.cfg, rewritten only where it names hosts (servers, bind line, log to stdout, an
`X-Upstream` response header). Then:

1. warm-up: every page once on each replica (their caches are per process);
2. baseline (unless --no-baseline): the load generator against replica 1 directly;
3. the same load through HAProxy, where each student first GETs its page (the browser's first
   request, which sets the routing cookie), opens the websocket with that cookie, and halfway through
   drops the websocket and resumes its session, as the frontend does after a network blip.

It reports, per student, the replica that answered the GET, the first websocket and the reconnect
(X-Upstream), whether the reconnect resumed the same Streamlit session (same session id in
new_session), how new sessions were split, what HAProxy's log says about the cookie, each
replica's /_stcore/metrics session counters, errors, and the throughput against the single replica.
The check (exit code 0) needs every student to stay on one replica and every reconnect to resume its
session, a split no worse than 45/55, and no errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench import load, report
from bench.balancers import HAProxy
from bench.protocol import StreamlitTab
from bench.server import APP_SCRIPT, PRODUCTION_OPTIONS, ROOT, StreamlitServer, session_metrics
from bench.stats import fmt

SPLIT_LIMIT = 0.55  # new sessions: no replica gets more than 55 %
TARGET_P95_MS = 300.0  # 40 students on two replicas (reported; the exit code is the sticky check)


async def warm_up(url: str, pages: list[str]) -> None:
    tab = StreamlitTab(url, timeout=60)
    await tab.connect()
    try:
        for page in pages:
            await tab.open_page(page)
    finally:
        await tab.close()


def stickiness(raw: dict) -> dict:
    """Did every session stay on one replica, did every reconnect resume it, how were new sessions split?"""
    students = []
    for s in raw["sessions"]:
        upstreams = {u for u in [s["http_upstream"], *s["ws_upstreams"]] if u}
        students.append({**s, "stayed": len(upstreams) == 1 and s["resumed"] is not False})
    per_replica: dict[str, int] = defaultdict(int)
    for s in students:
        if s["ws_upstreams"] and s["ws_upstreams"][0]:
            per_replica[s["ws_upstreams"][0]] += 1
    placed = sum(per_replica.values())
    return {
        "students": len(students),
        "stayed": sum(s["stayed"] for s in students),
        "resumed": sum(s["resumed"] is True for s in students),
        "reconnects": sum(s["resumed"] is not None for s in students),
        "sessions_per_replica": dict(per_replica),
        "largest_share": round(max(per_replica.values()) / placed, 3) if placed else None,
        "detail": students,
    }


def _cookie_routed(log: dict, st: dict) -> bool:
    """At least one request per websocket and reconnect routed by a valid cookie (V), and no request whose cookie
    was invalid, expired, for a server that is down, or ignored. (With least connections alone a reconnect often
    lands on its replica by chance, right after its socket closed.)"""
    flags = log["request_cookie"]
    return flags.get("V", 0) >= st["students"] + st["reconnects"] and not any(flags.get(f) for f in "IDEOU")


def verdict(res: dict, students: int, replicas: int = 2) -> dict[str, bool]:
    """The replica check, item by item (all must hold)."""
    st, lb = res["stickiness"], res["through_balancer"]
    share = st["largest_share"]
    log = res["balancer_log"]
    return {
        "every student stayed on one replica": st["stayed"] == st["students"] == students,
        "every student reconnected once and resumed its session": st["reconnects"] == students == st["resumed"],
        f"new sessions split no worse than {round(100 * (1 - SPLIT_LIMIT))}/{round(100 * SPLIT_LIMIT)}":
            share is not None and len(st["sessions_per_replica"]) == replicas and share <= SPLIT_LIMIT,
        "no errors": lb["errors"] == 0 and res["meta"]["server_tracebacks"] == 0,
        "the cookie chose the replica for every websocket and reconnect (HAProxy log: flag V)": _cookie_routed(log, st),
    }


def markdown(res: dict) -> str:
    st, base, lb = res["stickiness"], res.get("single_replica"), res["through_balancer"]
    name = "HAProxy"
    lines = [f"### Replicas behind {name}, {res['meta']['started']}" + (" (NO sticky sessions: control run)" if res["meta"].get("no_sticky") else ""), "",
             f"`{res['meta']['command']}` on {res['meta']['cpus']} CPUs (load average {res['meta']['loadavg']} at start).",
             ""]
    if res["meta"].get("note"):
        lines += [f"**{res['meta']['note']}**", ""]
    lines += ["| setup | students | runs | runs/s | p50 (ms) | p95 (ms) | p99 (ms) | errors |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for label, s in (("1 replica, direct", base), (f"2 replicas via {name}", lb)):
        if not s:
            continue
        a = s["interactions"]
        lines.append(f"| {label} | {s['students']} | {s['runs']} | {fmt(s['runs_per_s'], 2)} "
                     f"| {fmt(a['p50_ms'])} | {fmt(a['p95_ms'])} | {fmt(a['p99_ms'])} | {s['errors']} |")
        if s.get("interactions_long", {}).get("n"):
            b = s["interactions_short"]
            lines.append(f"| ... without long actions ({', '.join(s['long_actions'])}) | | {b['n']} | "
                         f"| {fmt(b['p50_ms'])} | {fmt(b['p95_ms'])} | {fmt(b['p99_ms'])} | |")
    lines += report.per_page_lines(lb)
    if base:
        ratio = (lb["runs_per_s"] / base["runs_per_s"]) if base["runs_per_s"] else None
        lines += ["", f"Throughput through {name} / one replica: {fmt(ratio, 2)}x "
                      f"(students pace themselves at ~1 interaction/s, so this only exceeds 1 once one replica saturates)."]
    log = res["balancer_log"]
    lines += ["", "Sticky sessions:", "",
              f"- {st['stayed']} of {st['students']} students stayed on one replica for the page GET, the websocket "
              f"and the reconnect; {st['resumed']} of {st['reconnects']} reconnects resumed the same Streamlit session.",
              f"- New sessions per replica (first websocket): "
              + ", ".join(f"{k}: {v}" for k, v in sorted(st["sessions_per_replica"].items()))
              + f" (largest share {fmt(st['largest_share'], 3)})."]
    lines.append(f"- HAProxy log: requests per server {dict(sorted(log['requests_per_server'].items()))}; "
                 f"request cookie flags {log['request_cookie']} (V = the cookie chose the server, N = none yet), "
                 f"response cookie flags {log['response_cookie']} (I = inserted).")
    lines.append("- Replica /_stcore/metrics after the run: "
                 + "; ".join(f"{u}: " + ", ".join(f"{k} {v:g}" for k, v in m.items()) for u, m in res["replica_metrics"].items())
                 + ".")
    lines += ["", "| check | result |", "|---|---|"]
    lines += [f"| {k} | {'pass' if ok else 'FAIL'} |" for k, ok in res["checks"].items()]
    lines += ["", f"**Replica check: {'PASS' if res['ok'] else 'FAIL'}.**"]
    for t in res.get("targets", []):
        lines += ["", f"Target: {t['target']}: measured {fmt(t['value'])} ms, "
                      f"{'pass' if t['ok'] else 'FAIL'}."]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m bench.replicas", description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=40)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds per phase (baseline, then HAProxy)")
    ap.add_argument("--think", type=float, default=1.0)
    ap.add_argument("--ramp", type=float, default=5.0)
    ap.add_argument("--pages", default="", help="comma-separated url paths (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--note", default="")
    ap.add_argument("--no-sticky", action="store_true",
                    help="negative control: no routing cookie (least connections only); the check must then fail")
    ap.add_argument("--no-baseline", action="store_true", help="skip the single-replica baseline phase")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out_root = Path(args.out)
    out_dir = out_root / f"{stamp}-replicas"
    out_dir.mkdir(parents=True, exist_ok=True)
    meta = report.run_meta("python -m bench.replicas", argv, PRODUCTION_OPTIONS, args.note)
    meta["no_sticky"] = args.no_sticky
    env = {"STREAMLIT_SERVER_COOKIE_SECRET": secrets.token_hex(32)}  # one secret shared by all replicas
    replicas = [StreamlitServer(APP_SCRIPT, options=PRODUCTION_OPTIONS, env=env, log_path=out_dir / f"server-{i + 1}.log")
                for i in range(2)]
    base_raw = None
    with tempfile.TemporaryDirectory(prefix="bench-haproxy-") as tmp, replicas[0], replicas[1]:
        for r in replicas:
            r.wait_healthy()
        all_pages = asyncio.run(load.discover_pages(replicas[0].url))
        requested = [p for p in args.pages.split(",") if p.strip()]
        pages = load.resolve_pages(requested, all_pages) if requested else all_pages
        print(f"replicas {[r.url for r in replicas]}; pages {[load.page_label(p) for p in pages]}", flush=True)
        for r in replicas:
            asyncio.run(warm_up(r.url, pages))
        cfg = dict(students=args.students, duration_s=args.duration, think_s=args.think, ramp_s=args.ramp,
                   timeout_s=args.timeout, seed=args.seed, pages=pages, long_actions=report.LONG_ACTIONS)
        if not args.no_baseline:
            print(f"baseline: {args.students} students on replica 1 for {args.duration:g} s", flush=True)
            base_raw = asyncio.run(load.concurrent_students(replicas[0].url, load.LoadConfig(**cfg), replicas[0].memory))
        with HAProxy([f"127.0.0.1:{r.port}" for r in replicas], Path(tmp), sticky=not args.no_sticky) as lb:
            before = {f"127.0.0.1:{r.port}": session_metrics(r.url) for r in replicas}
            print(f"through {lb.name} {lb.url}: {args.students} students for {args.duration:g} s, "
                  f"reconnecting after {args.duration / 2:g} s", flush=True)
            lb_cfg = load.LoadConfig(**cfg, get_page_first=True, reconnect_after_s=args.duration / 2)
            lb_raw = asyncio.run(load.concurrent_students(lb.url, lb_cfg))
            time.sleep(0.5)  # the balancer logs a websocket when it closes
            log = lb.log_summary()
            shutil.copy(lb.conf, out_dir / lb.conf.name)
        after = {f"127.0.0.1:{r.port}": session_metrics(r.url) for r in replicas}
        tracebacks = sum(r.log_tracebacks() for r in replicas)
    for raw in (base_raw, lb_raw):
        if raw:
            raw["records"] = [r.__dict__ for r in raw["records"]]
            raw["long_actions"] = list(report.LONG_ACTIONS)
    metrics = {u: {k: after[u].get(k, 0) - (0 if k == "active_sessions" else before[u].get(k, 0)) for k in after[u]}
               for u in after}
    res = {
        "meta": {**meta, "server_tracebacks": tracebacks},
        "single_replica": report.load_summary(base_raw) if base_raw else None,
        "through_balancer": report.load_summary(lb_raw),
        "stickiness": stickiness(lb_raw),
        "balancer_log": log,
        "replica_metrics": metrics,
    }
    res["checks"] = verdict(res, args.students)
    res["ok"] = all(res["checks"].values())
    p95 = res["through_balancer"]["interactions"]["p95_ms"]
    res["targets"] = [{"target": f"{args.students} students through 2 replicas: p95 <= {TARGET_P95_MS:g} ms",
                       "value": p95, "limit": TARGET_P95_MS, "ok": p95 is not None and p95 <= TARGET_P95_MS}]
    (out_dir / "results.json").write_text(json.dumps(res, indent=1, default=str))
    md = markdown(res)
    (out_dir / "summary.md").write_text(md)
    (out_root / "latest-replicas.md").write_text(md)
    print()
    print(md)
    print(f"written: {out_dir / 'results.json'}\n         {out_dir / 'summary.md'}")
    return 0 if res["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
