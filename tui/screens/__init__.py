"""Screens of the dashboard, one per file with its .tcss beside it."""
