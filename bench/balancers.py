"""The load balancer bench.replicas runs: HAProxy as a child process with the project's own deploy/haproxy.cfg rewritten
for loopback (our replicas, port, log), and what its log says about the routing cookie."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections import defaultdict
from pathlib import Path

from bench.server import ROOT, free_port, http_get

HAPROXY_TEMPLATE = ROOT / "deploy" / "haproxy.cfg"
HAPROXY_UPSTREAM_HEADER = 'http-response set-header X-Upstream "%si:%sp"'


def haproxy_config(template: str, upstreams: list[str], port: int, sticky: bool = True) -> str:
    """deploy/haproxy.cfg -> the same config on loopback: our servers and port, the log on stdout, X-Upstream.

    sticky=False drops the `cookie` line (least connections only): the negative control for the check.
    """
    out, replaced = [], defaultdict(int)
    for line in template.splitlines():
        stripped = line.strip()
        indent = line[: len(line) - len(line.lstrip())]
        if stripped.startswith("cookie SERVERID"):
            replaced["cookie"] = 1
            if not sticky:
                continue
        if stripped.endswith("# replica") and stripped.startswith("server "):
            if not replaced["replica"]:
                out += [f"{indent}server app-{i + 1} {u} cookie app-{i + 1}  # replica" for i, u in enumerate(upstreams)]
            replaced["replica"] += 1
            continue
        if stripped.startswith("bind "):
            line, replaced["bind"] = f"{indent}bind 127.0.0.1:{port}", 1
        elif stripped == "# bench: upstream header":
            line, replaced["header"] = f"{indent}{HAPROXY_UPSTREAM_HEADER}", 1
        elif stripped.endswith("# bench: log"):
            replaced["log"] = 1
        out.append(line)
    missing = {"replica", "bind", "header", "log", "cookie"} - set(replaced)
    if missing:
        raise ValueError(f"{HAPROXY_TEMPLATE} no longer has the lines bench.replicas rewrites: {sorted(missing)}")
    return "\n".join(out) + "\n"


def haproxy_log_summary(lines: list[str]) -> dict:
    """HAProxy's httplog lines -> requests per server and the persistence-cookie flags.

    The termination state's 3rd character says what the request's cookie did (N none, V valid: it chose
    the server, I invalid, D server down, E/O expired/old, U unused), the 4th what the response did with
    it (N nothing, I inserted, ...). A sticky setup shows V for every request that had a cookie.
    """
    pattern = re.compile(r" \S+ (?P<backend>[\w.-]+)/(?P<server>[\w.<>-]+) \S+ (?P<status>-?\d+) \S+ \S+ \S+ "
                         r"(?P<term>[-\w]{4}) ")
    per_server: dict[str, int] = defaultdict(int)
    request_cookie: dict[str, int] = defaultdict(int)
    response_cookie: dict[str, int] = defaultdict(int)
    for line in lines:
        m = pattern.search(line)
        if not m:
            continue
        per_server[m["server"]] += 1
        request_cookie[m["term"][2]] += 1
        response_cookie[m["term"][3]] += 1
    return {"requests_per_server": dict(per_server), "request_cookie": dict(request_cookie),
            "response_cookie": dict(response_cookie)}


class HAProxy:
    """haproxy in the foreground (-db) with deploy/haproxy.cfg rewritten for loopback; log on its stdout."""

    name = "HAProxy"

    def __init__(self, upstreams: list[str], workdir: Path, sticky: bool = True):
        self.binary = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
        if self.binary is None:
            raise SystemExit("haproxy is not installed: apt-get install -y haproxy")
        self.workdir, self.port = workdir, free_port()
        self.conf = workdir / "haproxy.cfg"
        self.conf.write_text(haproxy_config(HAPROXY_TEMPLATE.read_text(), upstreams, self.port, sticky))
        self.log = workdir / "haproxy.log"
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> HAProxy:
        test = subprocess.run([self.binary, "-c", "-q", "-f", str(self.conf)], capture_output=True, text=True)
        if test.returncode != 0:
            raise RuntimeError(f"haproxy -c failed:\n{test.stdout}{test.stderr}")
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen([self.binary, "-db", "-f", str(self.conf)], stdout=out,
                                         stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if http_get(self.url + "/_stcore/health")[1].strip() == "ok":
                    time.sleep(2.5)  # two health checks (inter 2s) mark both replicas up
                    return self
            except OSError:
                time.sleep(0.1)
        self.__exit__()
        raise RuntimeError(f"haproxy did not come up; see {self.log}")

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def log_summary(self) -> dict:
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return haproxy_log_summary(lines)
