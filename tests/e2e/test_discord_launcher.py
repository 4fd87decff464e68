"""Discord through the real product: `./openguru start` runs the Discord listener, which connects to a local fake
Discord once a maintainer pastes the bot token on the Integrations tab; a mention is answered in a thread named
after it; after a restart the thread's follow-up continues its conversation and a 👍 click is recorded; after the
gateway drops the socket the bot resumes and answers again; the token is in no log."""

from __future__ import annotations

import re
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.channels.discord_support import APP_ID, BOT_ID, BOT_TOKEN, GUILD, HUMAN, SUPPORT
from tests.e2e.test_restart import SLUG, _create_indexed_guru
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.pdfs import write_pdf
from tests.support.product import Browser, Product, eventually, launch, manage, stop

pytestmark = pytest.mark.slow

TAB = f"/dashboard/g/{SLUG}/integrations/"
QUESTION = "What does the visibility timeout do?"
SESSIONS = ("from backend.answering.models import Question as Q; "
            "print(sorted(str(q.binge_id) for q in Q.objects.filter(channel='DISCORD')))")
FEEDBACK = "from backend.answering.models import Question as Q; print(Q.objects.get(pk={pk}).feedback)"


def _post_on_tab(browser: Browser, action: str, fields: dict[str, str]) -> str:
    """Submit one of the Discord card's forms as the browser does: the tab's CSRF token, POST, follow the redirect."""
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', browser.get(TAB))
    assert token, "no CSRF token on the Integrations tab"
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **fields}).encode()
    request = urllib.request.Request(browser.base + action, data=body, headers={"Referer": browser.base + TAB})
    with browser.opener.open(request, timeout=60) as response:
        return str(response.read().decode())


def _connect_on_the_dashboard(product: Product) -> None:
    """The maintainer pastes the bot token, then allows #support (answer on mention)."""
    maintainer = Browser(product.url)
    maintainer.submit("/accounts/login/", {"username": product.username, "password": product.password})
    page = _post_on_tab(maintainer, TAB + "discord/connect/", {"discord-token": BOT_TOKEN})
    assert "Connected the Discord bot “DocsBot”" in page and BOT_TOKEN not in page
    page = _post_on_tab(maintainer, TAB + "discord/channels/", {f"mode-{SUPPORT}": "mention"})
    assert "Saved: the bot answers in 1 channel" in page


def _fake_discord(fake: FakeDiscord) -> None:
    fake.add_bot(BOT_TOKEN, user_id=BOT_ID, name="DocsBot", application_id=APP_ID)
    fake.add_user(HUMAN, "ada")
    fake.add_guild(GUILD, "Acme", bots=[BOT_TOKEN], channels=[{"id": SUPPORT, "name": "support", "type": 0}])


def _mention(fake: FakeDiscord, text: str) -> dict[str, Any]:
    return fake.user_message(channel_id=SUPPORT, author_id=HUMAN, content=f"<@{BOT_ID}> {text}", mentions=[BOT_ID],
                             guild_id=GUILD)


def _thread_of(fake: FakeDiscord, message: dict[str, Any]) -> dict[str, Any]:
    return fake.wait_for(lambda: next((t for t in fake.threads() if t["starter_message_id"] == message["id"]), None),
                         timeout=60)


def _answers(fake: FakeDiscord, thread_id: str, count: int) -> list[dict[str, Any]]:
    """The bot's final messages in a thread (those carrying the 👍/👎 buttons) once there are `count`."""
    def final() -> list[dict[str, Any]] | None:
        done = [m for m in fake.channel_messages(thread_id) if m["author"]["id"] == BOT_ID and m.get("components")]
        return done if len(done) >= count else None
    return fake.wait_for(final, timeout=120)


def _custom_ids(message: dict[str, Any]) -> list[str]:
    return [c["custom_id"] for row in message["components"] for c in row["components"]]


def _click_thumbs_up(fake: FakeDiscord, product: Product, thread_id: str, answer: dict[str, Any]) -> None:
    [up] = [c for c in _custom_ids(answer) if c.startswith("openguru:vote:1:")]
    clicked = fake.button_click(BOT_TOKEN, channel_id=thread_id, message_id=answer["id"], user_id=HUMAN,
                                custom_id=up)
    fake.wait_for(lambda: fake.interaction_responses(clicked), timeout=60)
    pk = up.rsplit(":", 1)[1]
    eventually(lambda: manage(product, "shell", "-c", FEEDBACK.format(pk=pk)).split()[-1] == "1", "the 👍 vote")


def test_discord_answers_in_a_thread_that_remembers_across_a_restart_and_a_dropped_gateway(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "manual.pdf", [
        ["The visibility timeout redelivers unacknowledged tasks to another worker after one hour."]])
    with FakeDiscord() as fake:
        _fake_discord(fake)
        env = {"OPENGURU_DISCORD_API_URL": fake.api_url, "OPENGURU_DISCORD_GATEWAY_URL": fake.gateway_url,
               "OPENGURU_DISCORD_RESCAN_S": "0.5", "OPENGURU_DISCORD_EDIT_INTERVAL_S": "0.1"}
        data_dir = tmp_path / "data"
        product = launch(data_dir, env=env)
        try:
            _create_indexed_guru(product, pdf)
            _connect_on_the_dashboard(product)
            fake.wait_for(lambda: fake.connected(BOT_TOKEN), timeout=60)  # the listener picked the token up
            asked = _mention(fake, QUESTION)
            thread = _thread_of(fake, asked)
            assert thread["name"] == QUESTION and thread["parent_id"] == SUPPORT
            [first] = _answers(fake, thread["id"], 1)
            assert "visibility" in first["content"].lower() and len(first["_edits"]) >= 2
        finally:
            assert stop(product) == 0
        again = launch(data_dir, env=env)
        try:
            fake.wait_for(lambda: fake.identifies(BOT_TOKEN) == 2 and fake.connected(BOT_TOKEN), timeout=60)
            fake.user_message(channel_id=thread["id"], author_id=HUMAN, content="And after how long?",
                              guild_id=GUILD)  # no mention: the bot's own thread
            second = _answers(fake, thread["id"], 2)[-1]
            sessions = re.findall(r"'([0-9a-f-]{36})'", manage(again, "shell", "-c", SESSIONS))
            assert len(sessions) == 2 and len(set(sessions)) == 1  # one thread, one conversation, across the restart
            _click_thumbs_up(fake, again, thread["id"], second)
            fake.drop_connections(BOT_TOKEN)
            fake.wait_for(lambda: fake.resumes(BOT_TOKEN) >= 1 and fake.connected(BOT_TOKEN), timeout=60)
            _answers(fake, _thread_of(fake, _mention(fake, "Which worker gets the task?"))["id"], 1)
            assert fake.identifies(BOT_TOKEN) == 2  # resumed the session, not a new one
        finally:
            assert stop(again) == 0
    logs = data_dir / "logs"
    assert "Discord listener ready" in (logs / "discord.log").read_text()
    leaked = [p.name for p in logs.rglob("*") if p.is_file() and BOT_TOKEN.encode() in p.read_bytes()]
    assert leaked == []
