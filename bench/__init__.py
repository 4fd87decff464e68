"""Benchmarks: each script prints its summary as its last line (see docs/benchmarks.md)."""
