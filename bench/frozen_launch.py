"""`python -m bench.frozen_launch run streamlit_app.py ...`: `streamlit run`, with import-time objects frozen.

An experiment for `python -m bench --gc-freeze`, not a way to run the app. With runner.postScriptGC = true
(Streamlit's default; the app's config turns it off) Streamlit runs a full `gc.collect()` after every
script run; its cost grows with the number of
container objects alive in the process, and most of those (~115,000) are the modules, classes and
functions of Streamlit, Plotly, pandas, NumPy and gensim. Importing those first and calling
`gc.freeze()` moves them to the permanent generation, so the collection after each run only walks
what the runs themselves created. The app can do the same in one place (see docs/performance.md).
"""

from __future__ import annotations

import gc
import importlib
import sys

HEAVY_MODULES = [
    "streamlit", "streamlit.runtime.scriptrunner.script_runner", "numpy", "pandas", "pyarrow",
    "plotly.graph_objects", "plotly.io", "altair", "gensim.models", "sklearn.decomposition",
    "attention_core", "charts", "ui.common",
]


def main() -> None:
    for name in HEAVY_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # a package the app does not use (yet) is simply not preloaded
    gc.collect()
    gc.freeze()
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main()


if __name__ == "__main__":
    main()
