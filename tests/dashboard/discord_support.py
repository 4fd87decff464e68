"""Fixture card_discord (a plugin of tests/conftest.py): the fake Discord with a bot in two servers, and settings."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

TOKEN = "MTIzNDU2Nzg5MDEyMzQ1Njc4.Gfake1.celery-guru-bot-token-for-tests-only"
OTHER_TOKEN = "OTg3NjU0MzIxMDk4NzY1NDMy.Gfake2.another-bot-token-for-tests-only"
BOT_USER, APP_ID, OTHER_APP = "123456789012345678", "223456789012345678", "987654321098765432"
ACME, BETA, ELSEWHERE = "300000000000000001", "300000000000000002", "300000000000000003"
GENERAL, NEWS, FORUM, VOICE, HELP = ("400000000000000001", "400000000000000002", "400000000000000003",
                                     "400000000000000004", "400000000000000005")
SUPPORT, SECRET = "400000000000000011", "400000000000000021"
@pytest.fixture
def card_discord(discord_fake: Any, settings: SettingsWrapper) -> Iterator[Any]:
    """A bot in "Acme" (a category, text, announcement, forum and voice channels) and "Beta"; "Elsewhere" without it."""
    discord_fake.add_bot(TOKEN, user_id=BOT_USER, name="Celery Guru", application_id=APP_ID)
    discord_fake.add_bot(OTHER_TOKEN, user_id="123456789012345699", name="Other Bot", application_id=OTHER_APP)
    discord_fake.add_guild(ACME, "Acme", bots=[TOKEN], channels=[
        {"id": HELP, "name": "Help", "type": 4, "position": 1},
        {"id": FORUM, "name": "questions", "type": 15, "parent_id": HELP, "position": 0},
        {"id": GENERAL, "name": "general", "type": 0, "position": 0},
        {"id": NEWS, "name": "announcements", "type": 5, "position": 1},
        {"id": VOICE, "name": "Lounge", "type": 2, "position": 2},
    ])
    discord_fake.add_guild(BETA, "Beta", bots=[TOKEN], channels=[{"id": SUPPORT, "name": "support", "type": 0}])
    discord_fake.add_guild(ELSEWHERE, "Elsewhere", bots=[OTHER_TOKEN],
                           channels=[{"id": SECRET, "name": "secret", "type": 0}])
    settings.OPENGURU_DISCORD_API_URL = discord_fake.api_url
    settings.DISCORD_BOT_TOKEN = ""
    yield discord_fake
