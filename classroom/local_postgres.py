"""A throwaway PostgreSQL cluster on 127.0.0.1 for the tests and the benchmark (Debian's postgresql package):
``with throwaway_cluster() as url: ...`` runs initdb in a temporary folder, starts the server on a free port, and
stops it and removes the folder afterwards. PostgreSQL refuses to run as root, so as root it runs as the user
``postgres`` (runuser).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path


class PostgresMissing(RuntimeError):
    pass


def server_bin() -> Path:
    """The folder of initdb and pg_ctl: $PG_BIN, else the newest /usr/lib/postgresql/<version>/bin."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise PostgresMissing("PostgreSQL's server is not installed (Debian: apt-get install postgresql)")
    return Path(found[-1]).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_server_user(args: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


class Cluster:
    def __init__(self, folder: Path, port: int):
        self.folder, self.port, self.bin = folder, port, server_bin()
        self.data = folder / "data"
        self.url = f"postgresql://postgres@127.0.0.1:{port}/postgres"

    def init(self) -> None:
        subprocess.run(_as_server_user([str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
                                        "-A", "trust", "--no-sync", "-E", "UTF8"]),
                       check=True, capture_output=True)

    def start(self) -> None:
        options = f"-h 127.0.0.1 -p {self.port} -k {self.folder} -c fsync=off -c max_connections=200"
        subprocess.run(_as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.data), "-l",
                                        str(self.folder / "log"), "-o", options, "-w", "-t", "60", "start"]),
                       check=True, capture_output=True)

    def stop(self) -> None:
        subprocess.run(_as_server_user([str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                                        "stop"]), capture_output=True)


@contextmanager
def throwaway_cluster():
    """-> a running Cluster (its ``url``); stopped and removed on exit."""
    folder = Path(tempfile.mkdtemp(prefix="attention-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    cluster = Cluster(folder, free_port())
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
