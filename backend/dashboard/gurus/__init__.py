"""Dashboard area: gurus."""
