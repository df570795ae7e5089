"""`python3 dev.py run` builds the GPT lesson's float32 weights before the server starts (one line says so, with how
long it took), and a failure there never stops the app from starting (attention_core.smollm2.prebuild)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from attention_core.smollm2 import prebuild as gpt_prebuild
from attention_core.smollm2 import weights as gpt_weights
from attention_core.smollm2.weights import GPTUnavailable

ROOT = Path(__file__).resolve().parents[1]

try:
    GGUF = gpt_weights.gguf_path()
except GPTUnavailable:
    GGUF = None
needs_model = pytest.mark.skipif(GGUF is None, reason="the model package (requirements-model.txt) is absent")


@pytest.fixture
def dev():
    """dev.py as a module (it is a script at the repository's root, not a package)."""
    spec = importlib.util.spec_from_file_location("dev_under_test", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def commands_of_run(dev, monkeypatch, prebuild_fails: bool) -> list[list[str]]:
    """-> the commands `dev.py run` starts, in order (none really run; the prebuild one raises if asked to)."""
    started = []

    def run(command, **kwargs):
        started.append(command)
        if prebuild_fails:
            raise FileNotFoundError(2, "No such file or directory", command[0])
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(dev, "ensure_env", lambda *a, **k: None)
    monkeypatch.setattr(dev.subprocess, "run", run)
    monkeypatch.setattr(dev.subprocess, "call", lambda command, **kwargs: started.append(command) or 0)
    assert dev.main(["run", "--server.port=9999"]) == 0
    return started


def test_run_builds_the_weights_before_it_starts_the_server(dev, monkeypatch):
    prebuild, _, server = commands_of_run(dev, monkeypatch, prebuild_fails=False)
    assert prebuild[1:] == ["-m", "attention_core.smollm2.prebuild"]
    assert server[1:4] == ["-m", "streamlit", "run"] and server[-1] == "--server.port=9999"


def test_run_starts_the_server_when_the_build_cannot_even_start(dev, monkeypatch, capsys):
    prebuild, build, server = commands_of_run(dev, monkeypatch, prebuild_fails=True)
    assert server[1:4] == ["-m", "streamlit", "run"]
    out = capsys.readouterr().out
    assert "the page builds them at its first visit" in out and "the pages compute them at their first visit" in out


def test_run_prepares_what_the_tests_prepare_before_the_server_starts(dev, monkeypatch, capsys):
    """Issue 40 item 19: `dev.py run` built only the weights; a class then met lesson 10's band, lesson 9's results
    and lesson 11's runs computed inside students' runs. The main command runs the tests' build step, says what it
    does and how long it took, and starts the server after it."""
    prebuild, build, server = commands_of_run(dev, monkeypatch, prebuild_fails=False)
    assert build[1:] == ["-c", dev.BUILD_GPT_CACHES]
    for step in ("store_offered_runs()", "store_results()", "BAND.result()", "DEFAULTS.result()", "REFERENT.result()",
                 "window_summary()", "japanese_heads()", "gemma_study()"):
        assert step in dev.BUILD_GPT_CACHES
    dockerfile = (Path(dev.__file__).parent / "Dockerfile").read_text()
    assert all(step in dockerfile for step in ("window_summary()", "japanese_heads()", "gemma_study()"))
    out = capsys.readouterr().out
    assert "preparing what a class needs" in out and "lesson 10's random-head band" in out
    assert re.search(r"the class's results are ready \(\d+\.\d s\)", out)
    assert server[1:4] == ["-m", "streamlit", "run"]  # (the last command: after the build)


@needs_model
def test_a_bad_model_file_is_a_line_not_an_error(tmp_path, monkeypatch):
    cut = tmp_path / "cut.gguf"
    with open(GGUF, "rb") as whole:
        cut.write_bytes(whole.read(5000))
    ready, line = gpt_prebuild.prebuild(cut, cache_root=tmp_path / "cache")
    assert not ready and "cannot be read" in line and "the page builds them at its first visit" in line
    monkeypatch.setattr(gpt_prebuild, "prebuild", lambda: (False, line))
    assert gpt_prebuild.main([]) == 0 and gpt_prebuild.main(["--strict"]) == 1  # the Dockerfile's build fails


@needs_model
@pytest.mark.slow
def test_devs_prebuild_step_builds_the_caches_into_the_cache_root(dev, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))  # the child's cache root: never the shared one
    dev.prebuild_gpt_weights()
    out = capfd.readouterr().out
    root = tmp_path / "attention-live" / "gpt"
    assert f"built the float32 weights in {root} in " in out and "no first visitor waits for them" in out
    assert gpt_weights.model_cache_folder(GGUF, root).is_dir()
    assert len([p for p in root.iterdir() if p.name.startswith("untrained-")]) == 1  # the page's control, too
    dev.prebuild_gpt_weights()  # a second start: nothing built again
    assert f"the float32 weights are ready in {root} (already built;" in capfd.readouterr().out


def test_the_tests_and_the_image_store_lesson_9s_results_before_a_server_starts(dev):
    """dev.py (before the tests) and the Dockerfile (while building the image) both write lesson 9's fixed results
    to disk (ui/gpt/circuits.py store_results: the study, the famous sentence, the presets' answers): no server
    start computes them."""
    from ui.gpt import circuits

    assert callable(circuits.store_results)
    assert "from ui.gpt.circuits import store_results" in dev.BUILD_GPT_CACHES and "store_results()" in dev.BUILD_GPT_CACHES
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'python -c "from ui.gpt.circuits import store_results; store_results()"' in dockerfile
    assert dockerfile.index("attention_core.smollm2.prebuild --strict") < dockerfile.index("store_results()")


def test_the_tests_and_the_image_train_lesson_11s_offered_runs_before_a_server_starts(dev):
    """dev.py (before the tests) and the Dockerfile both train the tiny GPT's offered runs (ui/tiny_gpt/runs.py
    store_offered_runs): no test and no first visitor of lesson 11 waits for them (CI's first visit timed out)."""
    from ui.tiny_gpt import runs

    assert callable(runs.store_offered_runs)
    assert "from ui.tiny_gpt.runs import store_offered_runs" in dev.BUILD_GPT_CACHES
    assert "store_offered_runs()" in dev.BUILD_GPT_CACHES
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'python -c "from ui.tiny_gpt.runs import store_offered_runs; store_offered_runs()"' in dockerfile
