"""Fake openai server fixtures (filled in with issue #3)."""
