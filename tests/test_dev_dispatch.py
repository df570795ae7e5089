"""`dev.py test`'s command lines: the whole suite in two steps (the tests without a browser on one worker a core,
then the browser tests alone), the fast loop in one step with its markers, named tests in one process as asked."""

from __future__ import annotations

import dev


def commands(monkeypatch, argv, returns=(0, 0)):
    calls, answers = [], list(returns)
    monkeypatch.setattr(dev, "ensure_env", lambda *a, **k: None)
    monkeypatch.setattr(dev, "build_gpt_caches", lambda *a, **k: None)
    monkeypatch.setattr(dev.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(dev.subprocess, "call", lambda cmd, **k: (calls.append(cmd[3:]), answers.pop(0))[1])
    return dev.main(["test", *argv]), calls


def test_the_whole_suite_runs_without_a_browser_on_two_workers_then_the_browser_tests_alone(monkeypatch):
    code, calls = commands(monkeypatch, [])
    assert code == 0
    assert calls == [["-n", "2", "-m", "not browser"], ["-m", "browser"]]


def test_a_failure_in_either_step_fails_the_command_and_no_browser_test_is_no_failure(monkeypatch):
    assert commands(monkeypatch, [], returns=(1, 0))[0] == 1
    assert commands(monkeypatch, [], returns=(0, 1))[0] == 1
    assert commands(monkeypatch, [], returns=(0, 5))[0] == 0  # (pytest's 5: nothing selected)


def test_the_fast_loop_is_one_step_with_its_markers(monkeypatch):
    code, calls = commands(monkeypatch, ["--fast", "-q"], returns=(0,))
    assert code == 0 and calls == [["-n", "2", "-m", f"({dev.FAST_MARKERS}) and not browser", "-q"]]


def test_named_tests_run_as_asked_in_one_process(monkeypatch):
    code, calls = commands(monkeypatch, ["tests/test_glossary.py", "-m", "slow"], returns=(0,))
    assert code == 0 and calls == [["-m", "slow", "tests/test_glossary.py"]]
