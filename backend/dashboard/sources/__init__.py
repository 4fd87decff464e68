"""Dashboard area: sources."""
