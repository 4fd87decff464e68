"""Evaluation: per-guru sets of questions with expected sources, and measured runs of the real pipeline."""
