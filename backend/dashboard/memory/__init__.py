"""Dashboard area: the guru's memory (maintainer notes and the model's proposals)."""
