"""Tripwires for ui.shared.streamlit_compat: each internal of Streamlit (and Plotly) the app leans on still has the shape and
the behaviour the module was written against. One fails loudly, naming the internal, when an upgrade changes it: then
follow CONTRIBUTING.md's "Upgrading Streamlit" for that entry."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from pathlib import Path

import plotly
import pytest
import streamlit
from streamlit import config
from streamlit.runtime.app_session import AppSession
from streamlit.testing.v1 import AppTest

from ui.shared import streamlit_compat
from ui.shared.streamlit_compat import SentAsIs, history_navigation, skip_file_watchers_on_resume

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- the pinned version, in every place that says it

def test_every_pin_names_the_installed_streamlit():
    from bench import protocol

    pinned = re.search(r"^streamlit==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M).group(1)
    assert streamlit.__version__ == pinned == streamlit_compat.STREAMLIT_VERSION == protocol.STREAMLIT_VERSION, (
        "Streamlit changed: walk CONTRIBUTING.md's 'Upgrading Streamlit', then move every pin together")


# ---------------------------------------------------------------- AppSession.register_file_watchers

def test_register_file_watchers_is_a_method_of_the_session_alone():
    params = list(inspect.signature(AppSession.register_file_watchers).parameters)
    assert params == ["self"], "AppSession.register_file_watchers(self) changed shape: re-read the patch"


def test_streamlit_still_registers_watchers_on_resume_unconditionally():
    """The bug the patch is for: if an upgrade checks the option on resume itself, the patch can go."""
    from streamlit.runtime import websocket_session_manager

    source = inspect.getsource(websocket_session_manager)
    assert "existing_session.register_file_watchers()" in source


def test_resumed_sessions_skip_watchers_only_when_watching_is_off(monkeypatch):
    calls = []
    monkeypatch.setattr(AppSession, "register_file_watchers", lambda self: calls.append(self))
    skip_file_watchers_on_resume()
    skip_file_watchers_on_resume()  # the frame runs it on every script run: wrapped once
    session = object()
    monkeypatch.setattr(config, "get_option", lambda key: "none" if key == "server.fileWatcherType" else None)
    AppSession.register_file_watchers(session)
    assert calls == []
    monkeypatch.setattr(config, "get_option", lambda key: "auto" if key == "server.fileWatcherType" else None)
    AppSession.register_file_watchers(session)
    assert calls == [session]


# ---------------------------------------------------------------- Back/Forward: is_history_navigation

def test_the_run_context_still_says_whether_back_or_forward_started_the_run():
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime.scriptrunner import get_script_run_ctx  # noqa: F401 - the import history_navigation makes
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    fields = {f.name: f for f in dataclasses.fields(ScriptRunContext)}
    assert "is_history_navigation" in fields and fields["is_history_navigation"].default is False
    assert ClientState.DESCRIPTOR.fields_by_name["is_history_navigation"].type == 8  # bool, sent by the browser
    assert "is_history_navigation=client_state.is_history_navigation" in inspect.getsource(AppSession)


def test_history_navigation_reads_the_run_context(monkeypatch):
    from streamlit.runtime import scriptrunner

    assert history_navigation() is False  # no script run: no Back
    for flag in (True, False):
        monkeypatch.setattr(scriptrunner, "get_script_run_ctx",
                            lambda flag=flag: type("Ctx", (), {"is_history_navigation": flag})())
        assert history_navigation() is flag


def test_streamlit_reseeds_bound_widgets_from_the_url_on_history_navigation():
    """What url_selectbox copies: on Back/Forward a bound widget takes the URL's value, or its default."""
    from streamlit.runtime.state.session_state import SessionState

    source = inspect.getsource(SessionState._handle_query_param_binding)
    assert "is_history_navigation" in source and "default_value = metadata.deserializer(None)" in source


# ---------------------------------------------------------------- st.session_state[key] = st.session_state[key]

def _radio_script():
    import streamlit as st

    from ui.shared.streamlit_compat import resend_widget_value

    if st.session_state.get("resend"):
        resend_widget_value("choice")
    st.radio("choice", [1, 2, 3], index=None, key="choice", format_func=lambda i: f"option {i}")


def test_assigning_a_widgets_own_value_sends_it_with_the_widget():
    at = AppTest.from_function(_radio_script, default_timeout=30)
    at.run()
    at.radio(key="choice").set_value(2).run()
    assert at.radio(key="choice").proto.set_value is False  # a person's choice is not sent back
    at.session_state["resend"] = True
    at.run()
    radio = at.radio(key="choice")
    assert radio.proto.set_value is True, "state[key] = state[key] no longer re-sends the value (show_stored_choice)"
    assert radio.value == 2 and not at.exception


# ---------------------------------------------------------------- SentAsIs: a BaseFigure without its constructor

SPEC = {"data": [{"type": "bar", "x": ["a", "b"], "y": [1, 2]}], "layout": {"title": {"text": "t"}}}


def test_plotly_takes_a_base_figure_as_its_to_dict():
    from plotly.tools import return_figure_from_figure_or_data

    assert return_figure_from_figure_or_data(SentAsIs(SPEC), validate_figure=True) is SPEC, (
        f"plotly {plotly.__version__} reads more than to_dict() from a BaseFigure: re-read ui.shared.display.show_plotly")


def _chart_script():
    import streamlit as st

    from tests.test_streamlit_compat import SPEC
    from ui.shared.streamlit_compat import SentAsIs

    st.plotly_chart(SentAsIs(SPEC), key="chart")


def test_st_plotly_chart_sends_the_dict_as_it_is():
    at = AppTest.from_function(_chart_script, default_timeout=30)
    at.run()
    assert not at.exception
    sent = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert sent["data"] == SPEC["data"] and sent["layout"]["title"] == SPEC["layout"]["title"]


# ---------------------------------------------------------------- the frame's boundary, start-up's internals

def test_a_fragment_still_signals_an_error_it_showed_with_fragment_handled_exception():
    from streamlit.runtime import fragment

    assert issubclass(streamlit_compat.FragmentHandledException, Exception)
    assert "raise FragmentHandledException(" in inspect.getsource(fragment)


def test_streamlit_still_compiles_its_emoji_pattern_on_import():
    import streamlit.emojis as emojis

    assert isinstance(emojis.EMOJI_EXTRACTION_REGEX, re.Pattern)


def test_the_post_run_collection_is_an_option_the_config_turns_off():
    assert config.get_option("runner.postScriptGC") in (True, False)  # raises if the option is gone
    text = (ROOT / ".streamlit" / "config.toml").read_text()
    assert re.search(r"^\[runner\][^\[]*^postScriptGC = false$", text, re.M | re.S)


def test_freeze_and_trim_run(monkeypatch):
    import gc

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    streamlit_compat.freeze_process_objects()
    assert frozen == [True]
    streamlit_compat.return_freed_memory()  # glibc's malloc_trim, or nothing elsewhere: never raises


@pytest.mark.skipif(not Path("/lib/x86_64-linux-gnu/libc.so.6").exists() and not Path("/lib64/libc.so.6").exists(),
                    reason="not a glibc system")
def test_glibc_has_malloc_trim():
    import ctypes

    assert ctypes.CDLL("libc.so.6").malloc_trim(0) in (0, 1)


# ---------------------------------------------------------------- bench/'s protocol client: the protos it reads

def test_the_protos_bench_speaks_still_have_their_fields():
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from streamlit.proto.NewSession_pb2 import Config

    assert "rerun_script" in BackMsg.DESCRIPTOR.fields_by_name
    assert {"query_string", "widget_states", "page_script_hash", "page_name", "fragment_id", "cached_message_hashes",
            "context_info"} <= set(ClientState.DESCRIPTOR.fields_by_name)
    assert {"timezone", "timezone_offset", "locale", "url", "is_embedded", "color_scheme"} <= set(
        ContextInfo.DESCRIPTOR.fields_by_name)
    forward = {f.name for f in ForwardMsg.DESCRIPTOR.oneofs_by_name["type"].fields}
    assert {"new_session", "navigation", "page_info_changed", "page_not_found", "session_event", "delta",
            "script_finished", "ref_hash"} <= forward
    assert {"FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY", "FINISHED_EARLY_FOR_RERUN"} <= set(
        ForwardMsg.ScriptFinishedStatus.keys())
    assert "max_cached_message_age" in Config.DESCRIPTOR.fields_by_name


# ---------------------------------------------------------------- the query string the browser sent (follow_history)

def test_the_run_context_keeps_the_query_string_the_browser_sent_after_a_page_change_filtered_it():
    from streamlit.runtime.scriptrunner.script_runner import ScriptRunner
    from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext

    assert "self.query_string = query_string" in inspect.getsource(ScriptRunContext.reset)
    runner = inspect.getsource(ScriptRunner)
    filtered, reset = runner.find("qp.populate_from_query_string("), runner.find("query_string=rerun_data.query_string")
    assert 0 < filtered < reset, "a page change no longer filters st.query_params before ctx.reset(query_string=...)"


def test_sent_query_params_reads_the_run_context(monkeypatch):
    from streamlit.runtime import scriptrunner

    assert streamlit_compat.sent_query_params() == {}  # no script run
    monkeypatch.setattr(scriptrunner, "get_script_run_ctx",
                        lambda: type("Ctx", (), {"query_string": "a=1&b=&a=2&lang=ja"})())
    assert streamlit_compat.sent_query_params() == {"a": "2", "b": "", "lang": "ja"}
