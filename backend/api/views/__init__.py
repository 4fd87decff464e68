"""REST API v1 views, one module per resource."""
