"""ui.runtime_fixes: a resumed session gets no file watchers while server.fileWatcherType is "none" (as a new one),
and keeps Streamlit's behaviour for any other value; the fix is applied once however often the frame runs."""

from streamlit import config
from streamlit.runtime.app_session import AppSession

from ui.runtime_fixes import skip_file_watchers_on_resume


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


def test_streamlit_still_registers_watchers_on_resume_unconditionally():
    """The bug the fix is for: if a Streamlit upgrade checks the option on resume itself, the fix can go."""
    import inspect

    from streamlit.runtime import websocket_session_manager

    source = inspect.getsource(websocket_session_manager)
    assert "existing_session.register_file_watchers()" in source
