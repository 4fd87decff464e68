"""Fake gemini server fixtures (filled in with issue #3)."""
