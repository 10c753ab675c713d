import pytest


@pytest.fixture(scope="session", autouse=True)
def _single_blas_thread():
    """These problems are small: one BLAS thread is fastest and avoids oversubscription on shared machines."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        yield
        return
    with threadpool_limits(1):
        yield
