"""REST API v1 glue and API keys."""
