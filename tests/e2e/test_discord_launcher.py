"""Discord through the real product: `./openguru start` runs the Discord listener, which connects to a local fake
Discord once a maintainer pastes the bot token on the Integrations tab; a mention is answered in a thread named
after it; after a restart the thread's follow-up continues its conversation and a 👍 click is recorded; after the
gateway drops the socket the bot resumes and answers again; the token is in no log."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.channels.discord_support import BOT_TOKEN, GUILD, HUMAN, SUPPORT
from tests.e2e.test_restart import SLUG, _create_indexed_guru
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.pdfs import write_pdf
from tests.support.discord_e2e import add_server, answers, connect_on_dashboard, mention, thread_of, vote_ids
from tests.support.product import Browser, Product, eventually, launch, manage, query, stop

pytestmark = pytest.mark.slow

QUESTION = "What does the visibility timeout do?"
SESSIONS = ("from backend.answering.models import Question as Q; "
            "print(sorted(str(q.binge_id) for q in Q.objects.filter(channel='DISCORD')))")


def _connect(product: Product) -> None:
    maintainer = Browser(product.url)
    maintainer.submit("/accounts/login/", {"username": product.username, "password": product.password})
    connect_on_dashboard(maintainer, SLUG)


def _readies(data_dir: Path) -> int:
    return (data_dir / "logs" / "chat_listeners.log").read_text().count("Discord bot DocsBot ready in 1 server(s)")


def _click_thumbs_up(fake: FakeDiscord, product: Product, thread_id: str, answer: dict[str, Any]) -> None:
    [up] = [c for c in vote_ids(answer) if c.startswith("openguru:vote:1:")]
    clicked = fake.button_click(BOT_TOKEN, channel_id=thread_id, message_id=answer["id"], user_id=HUMAN,
                                custom_id=up)
    fake.wait_for(lambda: fake.interaction_responses(clicked), timeout=60)
    pk = up.rsplit(":", 1)[1]
    eventually(lambda: query(product, "SELECT feedback FROM answering_question WHERE id = ?", pk) == (1,),
               "the 👍 vote")


def test_discord_answers_in_a_thread_that_remembers_across_a_restart_and_a_dropped_gateway(tmp_path: Path) -> None:
    pdf = write_pdf(tmp_path / "manual.pdf", [
        ["The visibility timeout redelivers unacknowledged tasks to another worker after one hour."]])
    with FakeDiscord() as fake:
        add_server(fake)
        env = {"OPENGURU_DISCORD_API_URL": fake.api_url, "OPENGURU_DISCORD_GATEWAY_URL": fake.gateway_url,
               "OPENGURU_DISCORD_RESCAN_S": "0.5", "OPENGURU_DISCORD_EDIT_INTERVAL_S": "0.1"}
        data_dir = tmp_path / "data"
        product = launch(data_dir, env=env)
        try:
            _create_indexed_guru(product, pdf)
            _connect(product)
            fake.wait_for(lambda: fake.connected(BOT_TOKEN), timeout=60)  # the listener picked the token up
            thread = thread_of(fake, mention(fake, QUESTION))
            assert thread["name"] == QUESTION and thread["parent_id"] == SUPPORT
            [first] = answers(fake, thread["id"])
            assert "visibility" in first["content"].lower() and len(first["_edits"]) >= 2
        finally:
            assert stop(product) == 0
        readies = _readies(data_dir)
        again = launch(data_dir, env=env)
        try:
            fake.wait_for(lambda: fake.identifies(BOT_TOKEN) == 2 and fake.connected(BOT_TOKEN), timeout=60)
            fake.user_message(channel_id=thread["id"], author_id=HUMAN, content="And after how long?",
                              guild_id=GUILD)  # no mention: the bot's own thread
            second = answers(fake, thread["id"], 2)[-1]
            sessions = re.findall(r"'([0-9a-f-]{36})'", manage(again, "shell", "-c", SESSIONS))
            assert len(sessions) == 2 and len(set(sessions)) == 1  # one thread, one conversation, across the restart
            _click_thumbs_up(fake, again, thread["id"], second)
            # Dropped once past READY (all its servers arrived), as a long-running bot is.
            eventually(lambda: _readies(data_dir) > readies, "the bot's READY after the restart")
            fake.drop_connections(BOT_TOKEN)
            fake.wait_for(lambda: fake.resumes(BOT_TOKEN) >= 1 and fake.connected(BOT_TOKEN), timeout=60)
            answers(fake, thread_of(fake, mention(fake, "Which worker gets the task?"))["id"])
            assert fake.identifies(BOT_TOKEN) == 2  # resumed the session, not a new one
        finally:
            assert stop(again) == 0
    logs = data_dir / "logs"
    assert "Discord listener ready" in (logs / "chat_listeners.log").read_text()
    written = [p for p in logs.rglob("*") if p.is_file()] + [product.output, again.output]
    assert [p.name for p in written if BOT_TOKEN.encode() in p.read_bytes()] == []  # the token is in no log
