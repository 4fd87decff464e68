"""Topic settings modules, star-imported at the end of base.py; each owns one concern."""
