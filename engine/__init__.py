"""textquarry's engine: folder -> content-addressed text store, headless.

Nothing in this package imports Textual or the ``tui`` package; the dashboard is one client of
the public API here (:func:`engine.sweep.sweep`, :mod:`engine.store`, :mod:`engine.watch`).
"""

__version__ = "0.1.0"
