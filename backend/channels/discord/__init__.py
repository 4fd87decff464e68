"""The Discord bot: gateway listener, decisions, streamed replies in threads, /ask."""
