"""``python -m engine`` runs the same command line as ``quarry``."""

import gc

from engine import stdio

stdio.mend()  # (before any import opens a file: see engine.stdio)

from engine.cli import main  # noqa: E402

code = main()
# The interpreter's teardown ends with a collection over every object the process made: with
# distributed imported (a Dask sweep), ~0.25 s of a sweep of 818 files that takes 5-6 s, for
# memory the process gives back as it ends anyway. Frozen, they are out of that collection
# (objects are still freed as their modules are cleared). The ``quarry`` script ends at once
# instead (tui.cli's ``_end_now``), where nothing else is left running.
gc.freeze()
raise SystemExit(code)
