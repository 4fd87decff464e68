"""Dashboard area: channels."""
