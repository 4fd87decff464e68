"""The MCP channel: a guru's ask, search and list_gurus tools for AI agents (streamable HTTP and stdio)."""
