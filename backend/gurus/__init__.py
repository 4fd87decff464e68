"""Gurus: the knowledge bases, and the lifecycle of their vector collections."""
