"""A fix for Streamlit 1.67's runtime, applied once per server process at start-up (ui/startup.py).

A resumed session (a browser whose websocket dropped and came back: a classroom's Wi-Fi, a laptop waking up) gets
file watchers again even with ``server.fileWatcherType = none``, where new sessions get none
(streamlit/runtime/websocket_session_manager.py calls ``AppSession.register_file_watchers`` unconditionally on
resume; app_session.py checks the option only in ``__init__``). Its next run then walks every module in
sys.modules for paths to watch (``LocalSourcesWatcher.update_watched_modules``, on the server's single Python core
per reconnect; docs/performance.md has the numbers), and walks them again whenever any session imports a new module,
so a class reconnecting at once waits on one another. With the option at
``none`` (production, bench/, the Dockerfile), a resumed session now skips the watchers as a new one does; with
any other value (development) nothing changes.
"""

from __future__ import annotations


def skip_file_watchers_on_resume() -> None:
    """Make AppSession.register_file_watchers a no-op while server.fileWatcherType is "none" (idempotent)."""
    from streamlit import config
    from streamlit.runtime.app_session import AppSession

    original = AppSession.register_file_watchers
    if getattr(original, "skips_when_watching_is_off", False):
        return

    def register_file_watchers(self) -> None:
        if config.get_option("server.fileWatcherType") == "none":
            return
        original(self)

    register_file_watchers.skips_when_watching_is_off = True
    register_file_watchers.__doc__ = original.__doc__
    AppSession.register_file_watchers = register_file_watchers
