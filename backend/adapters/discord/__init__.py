"""Discord through discord.py: where it connects, and the REST calls the dashboard makes."""
