"""Start and watch `streamlit run` servers on loopback ports: the one launcher of the benchmarks and the browser tests.

Each server is one `python -m streamlit run` process (no shell in between), so its pid is the
server's pid and /proc/<pid>/status gives its memory. Output goes to a log file that the report
links; tracebacks in it are counted as server-side errors.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_SCRIPT = "streamlit_app.py"
EMPTY_SCRIPT = "bench/empty_app.py"
# What the Dockerfile sets on top of .streamlit/config.toml for production, so the benchmarks measure that: no file
# watcher (it watches the whole repo and spends CPU on inotify overflows under write bursts) ...
PRODUCTION_OPTIONS = {"server.fileWatcherType": "none"}
# ... and at most 2 glibc malloc arenas: each session's script thread would otherwise get arenas that keep freed memory.
PRODUCTION_ENV = {"MALLOC_ARENA_MAX": "2"}


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_proc_status(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM (peak RSS), RssAnon (private) and RssFile (memory-mapped files, e.g. the GPT's weights, which every
    process maps from the same page cache) of a process in bytes, from /proc/<pid>/status ({} if it is gone)."""
    values = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                    values[key] = int(rest.split()[0]) * 1024
    except (FileNotFoundError, ProcessLookupError, ValueError):
        return {}
    return values


def read_proc_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) the process has used, from /proc/<pid>/stat (None if it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
        return None


def wait_until_idle(pids: list[int], quiet_s: float = 1.0, limit_s: float = 60.0, step_s: float = 0.25,
                    read_cpu=read_proc_cpu_s, sleep=time.sleep) -> float:
    """Wait until none of the processes used more than 2 % of a core over the last ``quiet_s`` (a fresh server done
    with its start-up work), at most ``limit_s``; -> the seconds waited."""
    window = max(1, round(quiet_s / step_s))
    history = [[read_cpu(pid) or 0.0 for pid in pids]]
    waited = 0.0
    while waited < limit_s:
        sleep(step_s)
        waited += step_s
        history = (history + [[read_cpu(pid) or 0.0 for pid in pids]])[-(window + 1):]
        if len(history) > window and all(b - a <= 0.02 * quiet_s for a, b in zip(history[0], history[-1])):
            return waited
    return waited


def http_get(url: str, timeout: float = 2.0) -> tuple[int, str, dict[str, str]]:
    """(status, body text, headers) of a GET; raises OSError when nothing answers."""
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode("utf-8", "replace"), dict(r.headers.items())


def session_metrics(base_url: str) -> dict[str, float]:
    """The session counters of /_stcore/metrics: active_sessions, session_events_total{type=...}."""
    _, text, _ = http_get(base_url + "/_stcore/metrics")
    found = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, _, value = line.rpartition(" ")
        if name.startswith(("active_sessions", "session_events_total")):
            found[name.replace('session_events_total{type="', "").rstrip('"}')] = float(value)
    return found


@dataclass
class StreamlitServer:
    """One `streamlit run <script>` on 127.0.0.1:<port>. Use as a context manager.

    ``launcher`` replaces `python -m streamlit` (e.g. a `python -c` wrapper that watches the server's threads).
    """

    script: str = APP_SCRIPT
    port: int = 0
    options: dict[str, str] = field(default_factory=dict)  # extra --section.key value options
    env: dict[str, str] = field(default_factory=dict)
    log_path: Path | None = None
    launcher: tuple[str, ...] = ()  # () = `python -m streamlit`
    proc: subprocess.Popen | None = None
    started_at: float = 0.0  # time.perf_counter() just before the process was spawned

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        return self.proc.pid if self.proc else 0

    def command(self) -> list[str]:
        cmd = [*(self.launcher or (sys.executable, "-m", "streamlit")), "run", self.script,
               "--server.port", str(self.port), "--server.address", "127.0.0.1",
               "--server.headless", "true", "--browser.gatherUsageStats", "false"]
        for key, value in self.options.items():
            cmd += [f"--{key}", str(value)]
        return cmd

    def start(self) -> StreamlitServer:
        self.port = self.port or free_port()
        log = open(self.log_path, "w") if self.log_path else subprocess.DEVNULL
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **PRODUCTION_ENV, **self.env}
        self.started_at = time.perf_counter()
        self.proc = subprocess.Popen(self.command(), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        if log is not subprocess.DEVNULL:
            log.close()  # the child has its own handle
        return self

    def wait_healthy(self, timeout: float = 60.0) -> float:
        """Seconds from spawn until GET /_stcore/health answered `ok`."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.script} exited with code {self.proc.returncode}; see {self.log_path}")
            try:
                status, body, _ = http_get(self.url + "/_stcore/health", timeout=1.0)
                if status == 200 and body.strip() == "ok":
                    return time.perf_counter() - self.started_at
            except OSError:
                pass
            time.sleep(0.02)
        raise RuntimeError(f"{self.script} did not answer /_stcore/health within {timeout:.0f} s")

    def memory(self) -> dict[str, int]:
        """VmRSS / VmHWM in bytes, plus cpu_s (CPU seconds used so far); {} once the process is gone."""
        if not self.proc or self.proc.poll() is not None:
            return {}
        found = read_proc_status(self.pid)
        cpu = read_proc_cpu_s(self.pid)
        return {**found, "cpu_s": cpu} if found and cpu is not None else found

    def log_tracebacks(self) -> int:
        """How many tracebacks the server printed (errors the protocol may not show)."""
        if not self.log_path or not self.log_path.exists():
            return 0
        return self.log_path.read_text(errors="replace").count("Traceback (most recent call last)")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)

    def __enter__(self) -> StreamlitServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
