"""Presenter mode's cost: server CPU of an unchanged rerun of each page with presenter mode off and on.

    .venv/bin/python -m bench.presenter_cost [--reruns 15] [--pages rnn,scaling]

Runs the app in-process with streamlit.testing (AppTest), opens each page (the first run fills the caches), then
times ``--reruns`` unchanged reruns with ``time.process_time`` (CPU of this process, all threads), presenter mode
off, then on. Prints the median per page and the ratio on/off (issue 11: presenter mode <= 1.2x). Not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.pages import PAGES  # noqa: E402


def _rerun_cpu(file: str, presenter: bool, reruns: int) -> list[float]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "streamlit_app.py"), default_timeout=120)
    if presenter:
        at.query_params["presenter"] = "true"
    at.run()
    if file != "lessons/home.py":
        at.switch_page(file).run()
    at.run()  # caches warm
    out = []
    for _ in range(reruns):
        start = time.process_time()
        at.run()
        out.append(time.process_time() - start)
    assert not at.exception, [e.message for e in at.exception]
    assert bool(at.session_state["presenter"]) is presenter
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reruns", type=int, default=15)
    ap.add_argument("--pages", default="", help="comma-separated url paths (home = the default page)")
    args = ap.parse_args(argv)
    wanted = {p.strip().replace("home", "") for p in args.pages.split(",")} if args.pages else None
    print(f"{'page':<16}{'off (ms)':>10}{'on (ms)':>10}{'on/off':>8}")
    for page in PAGES:
        if wanted is not None and page.url_path not in wanted:
            continue
        off = statistics.median(_rerun_cpu(page.file, False, args.reruns)) * 1000
        on = statistics.median(_rerun_cpu(page.file, True, args.reruns)) * 1000
        print(f"{page.url_path or 'home':<16}{off:>10.1f}{on:>10.1f}{on / off:>8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
