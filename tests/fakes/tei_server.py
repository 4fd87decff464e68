"""Fake tei server fixtures (filled in with issue #3)."""
