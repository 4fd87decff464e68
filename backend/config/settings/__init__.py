"""Settings package: base.py is complete with zero environment variables; others adjust it."""
