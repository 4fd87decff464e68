"""Slack: the Web API calls the bot makes, behind one small class (tests run it against a local fake Slack)."""
