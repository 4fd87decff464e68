"""Channels users talk through: Slack and Discord integrations and their threads."""
