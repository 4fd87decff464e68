"""Dashboard area: analytics."""
