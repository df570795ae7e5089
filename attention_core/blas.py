"""One BLAS thread for the lessons' small products.

At these sizes (a few hundred numbers a side) BLAS threads only wait for each other, and on a shared 2-core server
they take the core another student needs (a training run: 6-8 s with 2 threads, 0.1 s with 1). threadpoolctl's
``threadpool_limits`` looks up the process's BLAS libraries on every call (0.4 ms here, several ms in the server,
where many libraries are loaded: ~2 % of its CPU under a class's load); one controller found once serves every call.
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
