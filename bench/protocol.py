"""A headless Streamlit browser tab: the websocket protocol of Streamlit 1.67, nothing else.

The frontend opens ``ws://host/_stcore/stream`` with the subprotocol list
``["streamlit", <xsrf token>, <session id to resume>]`` (only the first is required), then sends a
``BackMsg.rerun_script`` (a ``ClientState``: page, query string, widget states, the hashes of the
ForwardMsgs it has cached) for every page load and widget change. The server answers with
ForwardMsgs: ``new_session`` (session id, page), ``navigation`` (the app's pages), ``delta``s (the
elements, widgets among them), ``page_info_changed`` (the query string), and ``script_finished``.
Elements of 10 kB or more are cacheable: the browser keeps them and lists their hashes in later
reruns, and the server then sends a small ``ref_hash`` message instead. `StreamlitTab` does the
same, so the bytes it counts are the bytes a real browser receives.

Read from 1.67.0's protos (STREAMLIT_VERSION): CONTRIBUTING.md's "Upgrading Streamlit" and
tests/test_streamlit_compat.py check it against the installed Streamlit and the fields used here.
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import websockets
from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ContextInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

from bench.widgets import Widget, is_widget_element

STREAMLIT_VERSION = "1.67.0"  # the protocol this client speaks (ui/shared/streamlit_compat.py holds the app's internals)
STREAM_PATH = "/_stcore/stream"
DEFAULT_MAX_CACHED_MESSAGE_AGE = 2  # NewSession.config.max_cached_message_age in 1.67
SIDEBAR_WEIGHT = 0.15  # a student mostly plays with the lesson, now and then with the sidebar
DONE = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}


class ProtocolError(RuntimeError):
    """The server did something a browser would treat as broken (closed socket, no reply in time)."""


@dataclass
class RunResult:
    """One script run as the student experiences it: from the BackMsg to script_finished."""

    kind: str  # "open", "navigate", "rerun" (same state again), "widget"
    page: str
    latency_s: float
    bytes_received: int
    messages: int
    errors: list[str] = field(default_factory=list)
    error_alerts: int = 0
    widget: str = ""  # the widget changed (its key, or its kind when it has no key)
    started_at: float = 0.0  # time.perf_counter() at send
    fragment: bool = False  # a fragment run (a widget inside an @st.fragment changed), not a run of the whole page

    @property
    def ok(self) -> bool:
        return not self.errors


@dataclass
class _CachedMsg:
    msg: ForwardMsg
    last_run: int


class StreamlitTab:
    """One browser tab on one Streamlit session, driven through the websocket protocol only.

    ``await tab.connect(); await tab.open_page("rnn"); await tab.change_random_widget(rng)``.
    """

    def __init__(self, base_url: str, *, timeout: float = 30.0, cookie: str = "", locale: str = "en-US"):
        parts = urlsplit(base_url)
        scheme = "wss" if parts.scheme == "https" else "ws"
        self.ws_url = f"{scheme}://{parts.netloc}{parts.path.rstrip('/')}{STREAM_PATH}"
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.long_actions: frozenset[str] = frozenset()  # widget keys held to long_timeout instead (training...)
        self.long_timeout = timeout
        self.cookie = cookie
        self.locale = locale
        self.ws = None
        self.session_id = ""
        self.page = ""  # url path of the page on screen
        self.page_script_hash = ""
        self.pages: dict[str, str] = {}  # url path -> page script hash, from the navigation message
        self.query_string = ""
        self.widgets: list[Widget] = []  # widgets of the last completed run, in screen order
        self.elements: list[tuple[str, object]] = []  # (element type, proto) on screen after the last run
        self._element_fragments: list[str] = []  # the fragment id of each of self.elements ("" = none)
        self.states: dict[str, WidgetState] = {}  # what the browser would send, by widget id
        self.upstream = ""  # X-Upstream header of the handshake (set by the bench's HAProxy config)
        self._cache: dict[str, _CachedMsg] = {}
        self._run_count = 0
        self._max_age = DEFAULT_MAX_CACHED_MESSAGE_AGE

    # --- connection -------------------------------------------------------------------------------

    async def connect(self, resume_session: bool = False) -> None:
        """Open the websocket; with resume_session, ask the server for the same session (as a reconnect)."""
        subprotocols = ["streamlit"]
        if resume_session and self.session_id:
            subprotocols += ["xsrf-not-used", self.session_id]  # position 2 = session to resume
        headers = {"Cookie": self.cookie} if self.cookie else None
        self.ws = await websockets.connect(
            self.ws_url, subprotocols=subprotocols, additional_headers=headers, max_size=None,
            compression=None, open_timeout=self.timeout, ping_interval=None, close_timeout=2,
        )
        response = getattr(self.ws, "response", None)
        self.upstream = response.headers.get("X-Upstream", "") if response is not None else ""

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    async def reconnect(self) -> None:
        """Drop the socket and come back to the same session, as the browser does after a network blip."""
        await self.close()
        await self.connect(resume_session=True)

    # --- what a student does ----------------------------------------------------------------------

    async def open_page(self, url_path: str, query_string: str = "") -> RunResult:
        """Type the page's URL: a first run of that page, with no widget states."""
        self.page, self.query_string = url_path, query_string
        self.states.clear()
        return await self._run("open", page_name=url_path, page_script_hash=self.pages.get(url_path, ""))

    async def navigate(self, url_path: str) -> RunResult:
        """Click the page in the sidebar: same session, new page (sidebar widgets keep their values).

        The query string goes along as the browser's URL holds it; the server drops the parameters
        bound to the old page's widgets.
        """
        self.page = url_path
        keep = {w.id for w in self.widgets if w.in_sidebar}
        self.states = {k: v for k, v in self.states.items() if k in keep}
        return await self._run("navigate", page_name=url_path, page_script_hash=self.pages.get(url_path, ""))

    async def rerun(self) -> RunResult:
        """Press R: the same page with the same widget values."""
        return await self._run("rerun")

    def drivable_widgets(self) -> list[Widget]:
        """Widgets a student can change now; form widgets are reached through their submit button."""
        return [w for w in self.widgets if w.drivable and (not w.form_id or w.is_form_submitter)]

    async def change_random_widget(self, rng: random.Random) -> RunResult:
        """Pick a widget (the lesson's more often than the sidebar's), give it a new valid value, rerun."""
        candidates = self.drivable_widgets()
        if not candidates:
            return await self.rerun()
        weights = [SIDEBAR_WEIGHT if w.in_sidebar else 1.0 for w in candidates]
        widget = rng.choices(candidates, weights=weights)[0]
        return await self.change_widget(widget, rng)

    async def change_widget(self, widget: Widget, rng: random.Random) -> RunResult:
        triggers: list[WidgetState] = []
        if widget.is_form_submitter:  # fill one field of the form, then submit it
            fields = [w for w in self.widgets if w.form_id == widget.form_id and w.drivable and w.kind != "button"]
            if fields:
                self._set_state(rng.choice(fields), rng)
            triggers.append(WidgetState(id=widget.id, trigger_value=True))
        elif widget.kind == "button":
            triggers.append(WidgetState(id=widget.id, trigger_value=True))
        else:
            if self._set_state(widget, rng) is None:
                return await self.rerun()
        # As the frontend: a widget drawn inside an @st.fragment reruns only that fragment.
        return await self._run("widget", triggers=triggers, widget=widget.user_key or widget.kind,
                               fragment_id=widget.fragment_id)

    def _set_state(self, widget: Widget, rng: random.Random) -> WidgetState | None:
        current = self.states.get(widget.id)
        new = widget.propose(current if current is not None else widget.initial_state(), rng)
        if new is not None:
            self.states[widget.id] = new
        return new

    # --- one script run ---------------------------------------------------------------------------

    def _client_state_msg(self, page_name: str, page_script_hash: str, triggers: list[WidgetState],
                          fragment_id: str = "") -> bytes:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query_string
        if fragment_id:
            cs.fragment_id = fragment_id
        cs.page_script_hash = page_script_hash
        cs.page_name = page_name
        cs.widget_states.widgets.extend(self.states.values())
        cs.widget_states.widgets.extend(triggers)
        cs.cached_message_hashes.extend(self._cache)
        cs.context_info.CopyFrom(ContextInfo(
            timezone="UTC", timezone_offset=0, locale=self.locale, url=f"{self.base_url}/{self.page}",
            is_embedded=False, color_scheme="light",
        ))
        return msg.SerializeToString()

    async def _run(self, kind: str, *, page_name: str | None = None, page_script_hash: str | None = None,
                   triggers: list[WidgetState] | None = None, widget: str = "", fragment_id: str = "") -> RunResult:
        if self.ws is None:
            raise ProtocolError("not connected")
        if page_name is None:
            page_name, page_script_hash = self.page, self.page_script_hash
        payload = self._client_state_msg(page_name, page_script_hash or "", triggers or [], fragment_id)
        result = RunResult(kind=kind, page=self.page, latency_s=0.0, bytes_received=0, messages=0, widget=widget,
                           fragment=bool(fragment_id))
        started = result.started_at = time.perf_counter()
        try:
            await self.ws.send(payload)
            limit = self.long_timeout if widget in self.long_actions else self.timeout
            await asyncio.wait_for(self._read_until_finished(result, fragment_id), timeout=limit)
        except asyncio.TimeoutError:
            result.errors.append("timeout")
            await self.close()  # a late reply must not be taken for the next run's; the student comes back anew
        except websockets.ConnectionClosed as exc:
            result.errors.append(f"connection closed ({exc.rcvd.code if exc.rcvd else 'no close frame'})")
            self.ws = None
        except OSError as exc:
            result.errors.append(f"network error ({type(exc).__name__})")
            self.ws = None
        result.latency_s = time.perf_counter() - started
        return result

    async def _read_until_finished(self, result: RunResult, fragment_id: str = "") -> None:
        run_widgets: list[Widget] = []
        run_elements: list[tuple[str, object, str]] = []
        while True:
            data = await self.ws.recv()
            if isinstance(data, str):
                result.errors.append("text frame")
                continue
            result.bytes_received += len(data)
            result.messages += 1
            msg = ForwardMsg()
            msg.ParseFromString(data)
            kind = msg.WhichOneof("type")
            if kind == "ref_hash":
                cached = self._cache.get(msg.ref_hash)
                if cached is None:
                    result.errors.append("ref_hash not in cache")
                    continue
                cached.last_run = self._run_count
                delta_path = list(msg.metadata.delta_path)
                msg = cached.msg
                kind = "delta"
            else:
                delta_path = list(msg.metadata.delta_path)
                if msg.metadata.cacheable and msg.hash:
                    self._cache[msg.hash] = _CachedMsg(msg, self._run_count)
            if kind == "new_session":
                self._on_new_session(msg.new_session)
                run_widgets, run_elements = [], []
            elif kind == "navigation":
                self.pages = {p.url_pathname: p.page_script_hash for p in msg.navigation.app_pages}
                self.page_script_hash = msg.navigation.page_script_hash or self.page_script_hash
            elif kind == "page_info_changed":
                self.query_string = msg.page_info_changed.query_string
            elif kind == "page_not_found":
                result.errors.append(f"page_not_found ({msg.page_not_found.page_name or self.page})")
            elif kind == "session_event" and msg.session_event.WhichOneof("type") == "script_compilation_exception":
                result.errors.append("script compilation exception")
            elif kind == "delta":
                self._on_delta(msg, delta_path, result, run_widgets, run_elements)
            elif kind == "script_finished":
                status = msg.script_finished
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    result.errors.append("compile error")
                if status == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    run_widgets, run_elements = [], []
                    continue
                if status == ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:  # only the fragment was redrawn
                    ran = {fragment_id} | {f for _, _, f in run_elements}
                    kept = [(k, p, f) for (k, p), f in zip(self.elements, self._element_fragments) if f not in ran]
                    run_elements = kept + run_elements
                    run_widgets = [w for w in self.widgets if w.fragment_id not in ran] + run_widgets
                self.elements = [(k, p) for k, p, _ in run_elements]
                self._element_fragments = [f for _, _, f in run_elements]
                self._on_finished(run_widgets)
                return

    def _on_new_session(self, new_session) -> None:
        if new_session.initialize.session_id:
            self.session_id = new_session.initialize.session_id
        self.page_script_hash = new_session.page_script_hash
        self._max_age = new_session.config.max_cached_message_age or self._max_age

    def _on_delta(self, msg: ForwardMsg, delta_path: list[int], result: RunResult, run_widgets: list[Widget],
                  run_elements: list[tuple[str, object, str]]) -> None:
        delta = msg.delta
        if delta.WhichOneof("type") != "new_element":
            return
        element = delta.new_element
        kind = element.WhichOneof("type")
        if kind is None:
            return
        proto = getattr(element, kind)
        run_elements.append((kind, proto, delta.fragment_id))
        if kind == "exception":
            result.errors.append(f"exception: {proto.type}")
        elif kind == "alert" and proto.format == Alert.ERROR:
            result.error_alerts += 1
        elif is_widget_element(kind, proto):
            run_widgets.append(Widget(kind, proto, tuple(delta_path), delta.fragment_id))

    def _on_finished(self, run_widgets: list[Widget]) -> None:
        """As the frontend: keep the state of widgets still on screen, age the message cache."""
        self.widgets = run_widgets
        live = {w.id for w in run_widgets}
        self.states = {k: v for k, v in self.states.items() if k in live}
        for w in run_widgets:
            if w.id not in self.states or getattr(w.proto, "set_value", False):
                state = w.initial_state()
                if state is not None:
                    self.states[w.id] = state
        self._run_count += 1
        self._cache = {h: c for h, c in self._cache.items() if self._run_count - c.last_run <= self._max_age}

