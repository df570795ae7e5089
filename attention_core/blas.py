"""One BLAS thread for the lessons' small products.

At these sizes (a few hundred numbers a side) BLAS threads only wait for each other, and on a shared server they
take the core another student needs. threadpoolctl's ``threadpool_limits`` looks up the process's BLAS libraries on
every call, so one controller found once serves every call (docs/performance.md has the numbers).
"""

from __future__ import annotations

import functools

from threadpoolctl import ThreadpoolController


@functools.lru_cache(maxsize=1)
def _controller() -> ThreadpoolController:
    return ThreadpoolController()  # the BLAS libraries NumPy loaded: looked up once per process


def single_blas_thread():
    """-> a context manager: BLAS calls inside it run on one thread (then the previous limits come back)."""
    return _controller().limit(limits=1, user_api="blas")
