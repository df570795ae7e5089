"""`python -m bench.soak`: does the server's memory grow over many reruns? (runner.postScriptGC = false)

    .venv/bin/python -m bench.soak                          # 500 reruns over every page, RSS after each round
    .venv/bin/python -m bench.soak --rounds 5 --per-page 20 --server-option runner.postScriptGC=true

One student walks through every page, round after round: on each page it reruns the page
`--per-page` times at the settings it has, then changes `--widgets` widgets (so cache misses and
new figures happen too). After each round the server's RSS is read from /proc. The first round
loads everything (GloVe, the figure caches fill up); after it, RSS should stay flat. A steady rise
from round to round would be a leak that the per-run full GC used to hide.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time

from bench import load
from bench.protocol import StreamlitTab
from bench.server import APP_SCRIPT, PRODUCTION_OPTIONS, StreamlitServer


async def soak(url: str, read_memory, rounds: int, per_page: int, widgets: int, seed: int) -> list[dict]:
    pages = await load.discover_pages(url)
    rng = random.Random(seed)
    tab = StreamlitTab(url, timeout=60)
    await tab.connect()
    rows, runs, errors = [], 0, 0
    try:
        for r in range(1, rounds + 1):
            started = time.perf_counter()
            for page in pages:
                results = [await tab.open_page(page)]
                for _ in range(per_page):
                    results.append(await tab.rerun())
                for _ in range(widgets):
                    results.append(await tab.change_random_widget(rng))
                runs += len(results)
                errors += sum(1 for x in results if x.errors)
                if tab.ws is None:
                    await tab.connect()
            mem = read_memory()
            rows.append({"round": r, "runs": runs, "errors": errors, "seconds": round(time.perf_counter() - started, 1),
                         "rss_mb": round(mem.get("VmRSS", 0) / 2**20, 1), "peak_mb": round(mem.get("VmHWM", 0) / 2**20, 1)})
            print(f"round {r:3d}: {runs:5d} runs, RSS {rows[-1]['rss_mb']:6.1f} MB (peak {rows[-1]['peak_mb']:.1f}), "
                  f"errors {errors}", flush=True)
    finally:
        await tab.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--per-page", type=int, default=5, help="reruns of each page per round")
    ap.add_argument("--widgets", type=int, default=2, help="widget changes on each page per round")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--server-option", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    options = {**PRODUCTION_OPTIONS, **dict(o.split("=", 1) for o in args.server_option)}
    with StreamlitServer(APP_SCRIPT, options=options) as server:
        server.wait_healthy()
        rows = asyncio.run(soak(server.url, server.memory, args.rounds, args.per_page, args.widgets, args.seed))
    if len(rows) >= 3:
        second, last = rows[1], rows[-1]
        per_100 = 100 * (last["rss_mb"] - second["rss_mb"]) / max(last["runs"] - second["runs"], 1)
        print(f"RSS from round 2 to round {last['round']}: {second['rss_mb']} -> {last['rss_mb']} MB "
              f"({per_100:+.2f} MB per 100 runs)")
    return 1 if rows and rows[-1]["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
