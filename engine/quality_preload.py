"""Imported by the worker pool's forkserver: loads the quality scorer's word table once, so
every worker forks with it (copy-on-write) instead of building it on its first text."""

from __future__ import annotations

import ftfy.badness  # noqa: F401  (the mojibake rule's regexes, compiled once here)

from engine.quality import MODELS

MODELS.warm()
