"""Contract tests of the Gurubase wire protocol (widget endpoints and REST API v1), from GURUBASE-NOTES.md."""
