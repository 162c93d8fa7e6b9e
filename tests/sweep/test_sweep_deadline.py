"""The per-configuration deadline (fuseflowc.sweep.worker.deadline): a timeout whose exception
is swallowed on the way (it went off inside a garbage-collector callback or a __del__, where
Python ignores exceptions) still ends the configuration as a timeout. Seen on CI: a Dask
worker's 0.1 ms timeout swallowed by distributed's GC callback gave an 'ok' row."""

from __future__ import annotations

import threading
import time

import pytest

from fuseflowc.sweep.worker import ConfigTimeout, deadline

# the swallowed exceptions are the point: Python reports them as unraisable
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


class _SlowDel:
    """Its __del__ runs past the deadline: the timeout goes off inside it and is ignored."""

    def __del__(self):
        end = time.monotonic() + 0.03
        while time.monotonic() < end:
            pass


def _swallowed(seconds: float) -> None:
    with deadline(seconds):
        obj = _SlowDel()
        del obj            # the exception is raised (and ignored) inside __del__


def test_a_swallowed_alarm_still_times_out_in_the_main_thread():
    with pytest.raises(ConfigTimeout):
        _swallowed(0.001)


def test_a_swallowed_posted_timeout_still_times_out_in_a_task_thread():
    got = []

    def task():
        try:
            _swallowed(0.001)
            got.append("ok")
        except ConfigTimeout:
            got.append("timeout")
    t = threading.Thread(target=task)
    t.start()
    t.join(10)
    assert got == ["timeout"]


def test_a_block_within_its_deadline_is_untouched():
    with deadline(5.0):
        x = sum(range(1000))
    assert x == 499500
    done = []
    t = threading.Thread(target=lambda: done.append(_run_within()))
    t.start()
    t.join(10)
    assert done == [True]


def _run_within() -> bool:
    with deadline(5.0):
        pass
    return True


def _swallowed_then_error(seconds: float) -> None:
    with deadline(seconds):
        obj = _SlowDel()
        del obj
        raise ValueError("an error after the deadline")


def test_an_error_after_a_swallowed_deadline_is_a_timeout():
    """Seen in the Dask test: the swallowed timeout let a configuration run on into an input
    error, an 'error' row where its neighbours were 'timeout' rows."""
    with pytest.raises(ConfigTimeout):
        _swallowed_then_error(0.001)
    got = []

    def task():
        try:
            _swallowed_then_error(0.001)
        except ConfigTimeout:
            got.append("timeout")
        except ValueError:
            got.append("error")
    t = threading.Thread(target=task)
    t.start()
    t.join(10)
    assert got == ["timeout"]
    with pytest.raises(ValueError):   # an error before the deadline stays the error
        with deadline(5.0):
            raise ValueError("early")
