"""deploy/k8s.yaml's class database, read as Kubernetes reads it: the app's ATTENTION_CLASS_DATABASE_URL names the
database's Service, port, user, database and password secret that the PostgreSQL StatefulSet really has, and every
secret key the file uses is one the documented `kubectl create secret` makes. (No live cluster: what this cannot
show is that the images start.)"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import yaml

from classroom import DATABASE_URL_ENV

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "deploy" / "k8s.yaml"


def objects() -> dict[tuple[str, str], dict]:
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(MANIFEST.read_text()) if d}


def container(obj: dict, name: str) -> dict:
    found = [c for c in obj["spec"]["template"]["spec"]["containers"] if c["name"] == name]
    assert len(found) == 1, name
    return found[0]


def expanded_env(c: dict, secrets: dict[tuple[str, str], str]) -> dict[str, str]:
    """A container's environment as the kubelet builds it: secret references filled from ``secrets``, and $(VAR)
    expanded from the variables defined before it (later ones stay as written, as in Kubernetes)."""
    env: dict[str, str] = {}
    for var in c["env"]:
        if "valueFrom" in var:
            ref = var["valueFrom"]["secretKeyRef"]
            env[var["name"]] = secrets[(ref["name"], ref["key"])]
        else:
            env[var["name"]] = re.sub(r"\$\((\w+)\)", lambda m: env.get(m[1], m[0]), var["value"])
    return env


def secret_keys_created() -> set[tuple[str, str]]:
    """The (secret, key) pairs the file's own `kubectl create secret generic NAME --from-literal=KEY=...` makes."""
    command = " ".join(line.lstrip("# ").rstrip("\\ ") for line in MANIFEST.read_text().splitlines()
                       if line.startswith("#"))
    made = re.search(r'kubectl create secret generic (\S+)((?:\s+--from-literal=[\w-]+=(?:"[^"]*"|\S+))+)', command)
    assert made, "the manifest says how to create its Secret"
    return {(made[1], key) for key in re.findall(r"--from-literal=([\w-]+)=", made[2])}


def test_the_app_reaches_the_class_database_the_manifest_runs(monkeypatch):
    found = objects()
    created = secret_keys_created()
    secrets = {pair: f"secret-{pair[1]}-0a1b" for pair in created}  # (hex-like, as the documented command makes)
    app = expanded_env(container(found[("Deployment", "attention-live")], "app"), secrets)
    db_set = found[("StatefulSet", "attention-live-db")]
    db = expanded_env(container(db_set, "postgres"), secrets)

    url = urlsplit(app[DATABASE_URL_ENV])
    service = found[("Service", url.hostname)]
    assert url.scheme == "postgresql"
    assert (url.username, url.password, url.path.lstrip("/")) == (db["POSTGRES_USER"], db["POSTGRES_PASSWORD"],
                                                                  db["POSTGRES_DB"])
    ports = [p for p in service["spec"]["ports"] if p["port"] == url.port]
    assert len(ports) == 1
    pod_ports = {p["name"]: p["containerPort"] for p in container(db_set, "postgres")["ports"]}
    assert pod_ports[ports[0]["targetPort"]] == 5432  # (PostgreSQL's port in the image)
    labels = db_set["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert db_set["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert db_set["spec"]["serviceName"] == url.hostname
    claims = {c["metadata"]["name"] for c in db_set["spec"]["volumeClaimTemplates"]}
    mounts = container(db_set, "postgres")["volumeMounts"]
    assert [m["name"] for m in mounts if m["mountPath"] == "/var/lib/postgresql/data"] == ["data"] and "data" in claims
    assert db["PGDATA"].startswith("/var/lib/postgresql/data/")  # (below the volume's root, which holds lost+found)

    monkeypatch.setenv(DATABASE_URL_ENV, app[DATABASE_URL_ENV])
    from classroom import open_store
    from classroom.postgres_store import PostgresStore

    store = open_store()  # (connects on first use only)
    assert isinstance(store, PostgresStore) and store.url == app[DATABASE_URL_ENV]


def test_every_secret_the_manifest_reads_is_made_by_its_kubectl_command():
    text = MANIFEST.read_text()
    read = set(re.findall(r"secretKeyRef: \{name: ([\w-]+), key: ([\w-]+)\}", text))
    assert ("attention-live", "class-db-password") in read
    assert read <= secret_keys_created()
    assert "optional: true" not in text  # (a missing key stops the pod rather than leaving the class on SQLite)
