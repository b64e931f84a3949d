"""Imported by the worker pool's forkserver: ftfy's mojibake rule (its regexes compiled once
here), so that every worker forks with it.

The common-word table (:data:`engine.quality.MODELS`, ~0.1 s to build) is not built here: the
forkserver's start is on the path of every cold sweep's first read, and a folder of short
notes never needs it (a text shorter than ``MIN_WORDS`` characters is not judged on common
words). A worker builds it for its first text long enough to be judged.
"""

from __future__ import annotations

import ftfy.badness  # noqa: F401
