"""attention_core.blas.single_blas_thread: one BLAS thread inside the block, the previous limits after it."""

from threadpoolctl import threadpool_info

from attention_core.blas import single_blas_thread


def blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


def test_one_thread_inside_and_the_old_limits_after():
    before = blas_threads()
    assert before, "NumPy's BLAS is found"
    with single_blas_thread():
        assert set(blas_threads()) == {1}
        with single_blas_thread():  # nested (training inside a page that already limits): still one
            assert set(blas_threads()) == {1}
    assert blas_threads() == before
