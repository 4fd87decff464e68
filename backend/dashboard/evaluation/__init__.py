"""Dashboard area: evaluation sets, runs side by side, and the threshold explorer."""
