"""``python -m tui`` is the ``quarry`` command."""

from tui.cli import run

run()
