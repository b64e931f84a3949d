"""Readers: one module per format family, found through :mod:`engine.readers.registry`."""
