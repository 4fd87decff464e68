"""General English word lists the trust step reads (see pipeline.support.is_coined)."""
