"""Data sources a guru learns from, their GitHub files and summaries."""
