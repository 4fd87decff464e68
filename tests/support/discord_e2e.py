"""Discord against a running product: a fake server with the bot in it, a maintainer's setup, people asking."""

from __future__ import annotations

import re
import urllib.parse
import urllib.request
from typing import Any

from tests.channels.discord_support import APP_ID, BOT_ID, BOT_TOKEN, GUILD, HUMAN, SUPPORT
from tests.fakes.discord_server import FakeDiscord
from tests.support.product import Browser

BOT_NAME = "DocsBot"


def add_server(fake: FakeDiscord) -> None:
    """The bot (Message Content intent on) in the server "Acme" with its #support channel, and a person, ada."""
    fake.add_bot(BOT_TOKEN, user_id=BOT_ID, name=BOT_NAME, application_id=APP_ID)
    fake.add_user(HUMAN, "ada")
    fake.add_guild(GUILD, "Acme", bots=[BOT_TOKEN], channels=[{"id": SUPPORT, "name": "support", "type": 0}])


def post_on_tab(browser: Browser, slug: str, action: str, fields: dict[str, str]) -> str:
    """POST one of the Discord card's forms as the page does (its CSRF token); the page redirected to."""
    tab = f"/dashboard/g/{slug}/integrations/"
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', browser.get(tab))
    assert token, "no CSRF token on the Integrations tab"
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **fields}).encode()
    request = urllib.request.Request(f"{browser.base}{tab}discord/{action}/", data=body,
                                     headers={"Referer": browser.base + tab})
    with browser.opener.open(request, timeout=60) as response:
        return str(response.read().decode())


def connect_on_dashboard(browser: Browser, slug: str) -> None:
    """A logged-in maintainer pastes the bot token, then allows #support (answer on mention)."""
    page = post_on_tab(browser, slug, "connect", {"discord-token": BOT_TOKEN})
    assert f"Connected the Discord bot “{BOT_NAME}”" in page and BOT_TOKEN not in page, page[-2000:]
    page = post_on_tab(browser, slug, "channels", {f"mode-{SUPPORT}": "mention"})
    assert "Saved: the bot answers in 1 channel" in page, page[-2000:]


def mention(fake: FakeDiscord, text: str) -> dict[str, Any]:
    """ada mentions the bot in #support; the message."""
    return fake.user_message(channel_id=SUPPORT, author_id=HUMAN, content=f"<@{BOT_ID}> {text}", mentions=[BOT_ID],
                             guild_id=GUILD)


def thread_of(fake: FakeDiscord, message: dict[str, Any]) -> dict[str, Any]:
    """The thread the bot opened on `message`, once it has."""
    def opened() -> list[dict[str, Any]]:
        return [t for t in fake.threads() if t["starter_message_id"] == message["id"]]
    return fake.wait_for(opened, timeout=60)[0]


def answers(fake: FakeDiscord, thread_id: str, count: int = 1) -> list[dict[str, Any]]:
    """The bot's finished answers in a thread (the messages carrying 👍/👎 buttons), once there are `count`."""
    def final() -> list[dict[str, Any]]:
        done = [m for m in fake.channel_messages(thread_id) if m["author"]["id"] == BOT_ID and m.get("components")]
        return done if len(done) >= count else []
    return fake.wait_for(final, timeout=120)


def vote_ids(answer: dict[str, Any]) -> list[str]:
    """The custom ids of an answer's buttons: openguru:vote:<1|-1>:<question id>."""
    return [c["custom_id"] for row in answer["components"] for c in row["components"]]
