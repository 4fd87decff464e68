"""Dashboard area: questions."""
