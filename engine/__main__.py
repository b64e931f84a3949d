"""``python -m engine`` runs the same command line as ``quarry``."""

from engine.cli import main

raise SystemExit(main())
