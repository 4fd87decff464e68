"""The maintainer dashboard: server-rendered pages for gurus, sources, questions, channels and settings."""
