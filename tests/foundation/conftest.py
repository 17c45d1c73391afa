import gc

import pytest


@pytest.fixture
def collector_restored():
    """Warming up sets the test process's objects aside from Python's collector; this puts them back."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)
