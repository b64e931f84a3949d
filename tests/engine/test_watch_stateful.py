"""The watched store equals a fresh sweep after any sequence of file operations (short run).

The machine is :class:`tests.engine.watchmodel.WatchMachine`; this runs a few short examples
so that CI stays well under a minute. ``tests/bench/bench_watch_stateful.py`` runs it long.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings

from tests.engine.watchmodel import WatchMachine

pytestmark = pytest.mark.filterwarnings("ignore:Callback with id:RuntimeWarning")


class NativeWatch(WatchMachine):
    """The native observer (inotify on Linux)."""


NativeWatch.TestCase.settings = settings(
    max_examples=3,
    stateful_step_count=12,
    deadline=None,
    derandomize=False,
    # Each step runs a real watcher: shrinking a failure would take minutes. Hypothesis still
    # prints the failing sequence of operations, which is what one needs to reproduce it.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestNativeWatch = NativeWatch.TestCase
