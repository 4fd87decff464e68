"""Django-free RAG pipeline: typed data, ports (Protocols) and pure functions."""
