"""Imported in the fork server of child.py only (its preload; never in the server process): the children forked from
it (lesson 11's training, lesson 9's timing) start without the parent's __main__.

multiprocessing prepares a "forkserver" (or "spawn") child by running the parent's main module again, as __mp_main__.
In a Streamlit server that module is the page script itself (Streamlit's script runner puts it in
sys.modules["__main__"] for every run): each child would run the whole app outside Streamlit. A child here needs
nothing from __main__ (its target is child._child, its arguments the core's types), so its
preparation skips it.
"""

from __future__ import annotations

from multiprocessing import spawn

_MAIN = ("init_main_from_path", "init_main_from_name")
_prepare = spawn.prepare


def _prepare_without_main(data: dict) -> None:
    _prepare({key: value for key, value in data.items() if key not in _MAIN})


spawn.prepare = _prepare_without_main  # looked up by spawn._main in each child forked from here
