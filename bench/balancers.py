"""The load balancers bench.replicas runs: nginx and HAProxy as child processes, each with the project's own
deploy/ config rewritten for loopback (our replicas, port, logs), and what their logs say about the routing cookie."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections import defaultdict
from pathlib import Path

from bench.server import ROOT, free_port, http_get

NGINX_TEMPLATE = ROOT / "deploy" / "nginx.conf"
UPSTREAM_HEADER = "add_header X-Upstream $upstream_addr always;"
HAPROXY_TEMPLATE = ROOT / "deploy" / "haproxy.cfg"
HAPROXY_UPSTREAM_HEADER = 'http-response set-header X-Upstream "%si:%sp"'


def nginx_config(template: str, upstreams: list[str], port: int, workdir: Path, sticky: bool = True) -> str:
    """deploy/nginx.conf -> the same config on loopback: our upstreams, port, log and temp paths.

    sticky=False drops the `hash` line (plain round robin): the negative control for the check.
    """
    out, replaced = [], defaultdict(int)
    for line in template.splitlines():
        if line.strip().startswith("hash $st_route"):
            replaced["hash"] = 1
            if not sticky:
                continue
        if line.rstrip().endswith("# replica"):
            if not replaced["replica"]:
                indent = line[: len(line) - len(line.lstrip())]
                out += [f"{indent}server {u};  # replica" for u in upstreams]
            replaced["replica"] += 1
            continue
        stripped = line.strip()
        if stripped.startswith("listen "):
            line, replaced["listen"] = line.replace(stripped, f"listen 127.0.0.1:{port};"), 1
        elif stripped == "# bench: upstream header":
            line, replaced["header"] = line.replace(stripped, UPSTREAM_HEADER), 1
        elif stripped.startswith("worker_processes"):
            line, replaced["workers"] = "worker_processes 1;", 1
        elif stripped.startswith("access_log "):
            line, replaced["log"] = line.replace(stripped.split()[1], str(workdir / "access.log")), 1
        elif stripped == "http {":
            out.append(line)
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
                out.append(f"    {kind}_temp_path {workdir / kind};")
            continue
        out.append(line)
    missing = {"replica", "listen", "header", "workers", "log", "hash"} - set(replaced)
    if missing:
        raise ValueError(f"{NGINX_TEMPLATE} no longer has the lines bench.replicas rewrites: {sorted(missing)}")
    head = [f"pid {workdir / 'nginx.pid'};", f"error_log {workdir / 'error.log'} warn;"]
    return "\n".join(head + out) + "\n"


def _find_binary(name: str) -> str:
    """The path of Debian's ``name`` (on PATH or in /usr/sbin); exits with how to install it when it is missing."""
    binary = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists() else None)
    if binary is None:
        raise SystemExit(f"{name} is not installed: apt-get install -y {name}")
    return binary


class _Balancer:
    """A load balancer process on loopback: wait until it answers health checks; stop it on exit."""

    proc: subprocess.Popen | None = None
    url: str

    def _wait_healthy(self, failure: str, settle_s: float = 0.0):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                if http_get(self.url + "/_stcore/health")[1].strip() == "ok":
                    time.sleep(settle_s)
                    return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(failure)

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class Nginx(_Balancer):
    """nginx in the foreground (daemon off) with a private prefix, config, logs and pid file."""

    name = "nginx"

    def __init__(self, upstreams: list[str], workdir: Path, sticky: bool = True):
        self.binary, self.workdir, self.port = _find_binary("nginx"), workdir, free_port()
        workdir.chmod(0o755)  # nginx workers run as an unprivileged user and write temp files here
        self.conf = workdir / "nginx.conf"
        self.conf.write_text(nginx_config(NGINX_TEMPLATE.read_text(), upstreams, self.port, workdir, sticky))
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Nginx:
        test = subprocess.run([self.binary, "-t", "-p", str(self.workdir), "-c", str(self.conf)],
                              capture_output=True, text=True)
        if test.returncode != 0:
            raise RuntimeError(f"nginx -t failed:\n{test.stderr}")
        self.proc = subprocess.Popen([self.binary, "-p", str(self.workdir), "-c", str(self.conf), "-g", "daemon off;"],
                                     stdout=subprocess.DEVNULL, stderr=open(self.workdir / "nginx.out", "w"))
        return self._wait_healthy(f"nginx did not come up; see {self.workdir / 'error.log'}")

    def log_summary(self) -> dict:
        routes = self.routes()
        return {"routes_in_log": len(routes),
                "routes_on_two_replicas": {r: sorted(u) for r, u in routes.items() if len(u) > 1}}

    def routes(self) -> dict[str, set[str]]:
        """st_route cookie value -> upstream addresses that served it, from the access log."""
        seen: dict[str, set[str]] = defaultdict(set)
        log = self.workdir / "access.log"
        for line in log.read_text().splitlines() if log.exists() else []:
            fields = dict(part.split("=", 1) for part in line.split() if part.startswith(("route=", "upstream=")))
            if fields.get("upstream", "-") not in ("-", ""):
                seen[fields["route"]].add(fields["upstream"])
        return seen


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
    import re

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


class HAProxy(_Balancer):
    """haproxy in the foreground (-db) with deploy/haproxy.cfg rewritten for loopback; log on its stdout."""

    name = "HAProxy"

    def __init__(self, upstreams: list[str], workdir: Path, sticky: bool = True):
        self.binary, self.workdir, self.port = _find_binary("haproxy"), workdir, free_port()
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
        out = open(self.log, "w")
        self.proc = subprocess.Popen([self.binary, "-db", "-f", str(self.conf)], stdout=out, stderr=subprocess.STDOUT)
        out.close()
        return self._wait_healthy(f"haproxy did not come up; see {self.log}", settle_s=2.5)  # 2 health checks (inter 2s)

    def log_summary(self) -> dict:
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return haproxy_log_summary(lines)
