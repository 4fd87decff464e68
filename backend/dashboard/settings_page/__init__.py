"""Dashboard area: settings_page."""
