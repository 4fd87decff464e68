"""Discord bot test fixtures: a fake Discord with one server, a guru set up on it, the real listener in a thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks
from pytest_django.fixtures import Settings as SettingsWrapper

from backend.channels.discord.listener import DiscordSupervisor
from backend.gurus.models import Guru
from backend.integrations.discord_setup import discord_channels_set, discord_connect
from backend.integrations.models import Integration
from tests.channels.parity_support import ChannelScript
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import OpenAIFakeServer
from tests.integration.answering.answer_support import make_indexed_guru

SITE = "http://openguru.test"
# Snowflakes of Discord's length: discord.py reads mentions in text only for ids of 15 to 20 digits.
GUILD, SUPPORT, AUTO, FORUM, ELSEWHERE = ("1100000000000000001", "1100000000000000010", "1100000000000000020",
                                          "1100000000000000030", "1100000000000000090")
BOT_TOKEN, BOT_ID, APP_ID, HUMAN = ("OTAw.fake-bot.token-for-tests", "1100000000000000900", "1100000000000000800",
                                    "1100000000000000077")


@pytest.fixture
def discord(settings: SettingsWrapper, discord_fake: FakeDiscord) -> FakeDiscord:
    discord_fake.add_bot(BOT_TOKEN, user_id=BOT_ID, name="DocsBot", application_id=APP_ID)
    discord_fake.add_user(HUMAN, "ada")
    discord_fake.add_user("1100000000000000078", "grace")
    discord_fake.add_guild(GUILD, "Acme", bots=[BOT_TOKEN], channels=[
        {"id": SUPPORT, "name": "support", "type": 0}, {"id": AUTO, "name": "ask-docs", "type": 0},
        {"id": FORUM, "name": "help", "type": 15}, {"id": ELSEWHERE, "name": "random", "type": 0}])
    settings.OPENGURU_DISCORD_API_URL, settings.OPENGURU_DISCORD_GATEWAY_URL = discord_fake.api_url, \
        discord_fake.gateway_url
    settings.OPENGURU_DISCORD_RESCAN_S = 0.2
    settings.OPENGURU_DISCORD_EDIT_INTERVAL_S = 0.0  # every delta edits the message: the test sees them all
    return discord_fake


@pytest.fixture
def discord_model(settings: SettingsWrapper, openai_server: OpenAIFakeServer) -> OpenAIFakeServer:
    openai_server.script = ChannelScript(chunks=6)
    settings.OPENGURU_LLM = openai_server.llm_settings()
    return openai_server


@pytest.fixture
def discord_guru(django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks) -> Guru:
    return make_indexed_guru(django_capture_on_commit_callbacks)


def connect_discord(guru: Guru, *, channels: list[dict[str, str]] | None = None,
                    allow_dm: bool = False) -> Integration:
    """As a maintainer does on the Integrations tab: the token, then the allow-list."""
    connection = discord_connect(guru=guru, token=BOT_TOKEN, use_env=False, site_url=SITE)
    chosen = channels if channels is not None else [
        {"id": SUPPORT, "mode": "mention"}, {"id": AUTO, "mode": "auto"}, {"id": FORUM, "mode": "auto"}]
    discord_channels_set(integration=connection.integration, channels=chosen, allow_dm=allow_dm)
    connection.integration.refresh_from_db()
    return connection.integration


@pytest.fixture
def discord_integration(discord_guru: Guru, discord: FakeDiscord, discord_model: OpenAIFakeServer) -> Integration:
    return connect_discord(discord_guru)


class ListenerThread:
    """The real listener (DiscordSupervisor, as `manage.py discord_listener` runs it) on its own event loop."""

    def __init__(self) -> None:
        self.supervisor: DiscordSupervisor | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.started = threading.Event()
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._main, name="discord-listener", daemon=True)

    def _main(self) -> None:
        async def serve() -> None:
            self.supervisor, self.loop = DiscordSupervisor(), asyncio.get_running_loop()
            self.started.set()
            await self.supervisor.run()
        try:
            asyncio.run(serve())
        except BaseException as exc:  # noqa: BLE001 - reported by stop(), in the test's thread
            self.failure = exc
            self.started.set()

    def start(self) -> ListenerThread:
        self.thread.start()
        assert self.started.wait(10), "the listener did not start"
        return self

    def stop(self) -> None:
        if self.loop is not None and self.supervisor is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self.supervisor.stopping.set)
        self.thread.join(30)
        assert not self.thread.is_alive(), "the listener did not stop"
        if self.failure is not None:
            raise self.failure


@pytest.fixture
def listener(discord_integration: Integration, discord: FakeDiscord) -> Iterator[ListenerThread]:
    running = ListenerThread().start()
    discord.wait_for(lambda: discord.connected(BOT_TOKEN), timeout=30)
    discord.wait_for(lambda: discord.commands(APP_ID), timeout=30)
    # Past READY (on_ready wrote the tab's "last event"): only then does the bot know its session id. A test
    # that drops the connection earlier would see a new IDENTIFY instead of a RESUME, which is right then.
    discord.wait_for(lambda: Integration.objects.filter(pk=discord_integration.pk, last_event_at__isnull=False)
                     .exists(), timeout=30)
    try:
        yield running
    finally:
        running.stop()


def bot_messages(discord: FakeDiscord, channel_id: str) -> list[dict[str, Any]]:
    return [m for m in discord.channel_messages(channel_id) if m["author"]["id"] == BOT_ID]
