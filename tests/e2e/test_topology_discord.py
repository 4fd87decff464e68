"""Discord on the production topology: the token pasted on the Integrations tab through nginx, then a mention
answered in a thread by compose's `discord` service, its Question row in PostgreSQL."""

from __future__ import annotations

import os

import psycopg
import pytest

from backend.adapters.llm.fake import ScriptedReply
from tests.channels.discord_support import BOT_TOKEN, SUPPORT
from tests.e2e.conftest import ANSWER, SLUG, Deployment
from tests.support.discord_e2e import add_server, answers, connect_on_dashboard, mention, thread_of, vote_ids

pytestmark = [
    pytest.mark.production_profile,
    pytest.mark.slow,
    pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs the production profile's data stores"),
]

QUESTION = "How do I install widgets, asked from Discord?"


def test_a_mention_is_answered_in_a_thread_by_the_discord_service(deployment: Deployment) -> None:
    fake = deployment.fakes.discord
    deployment.fakes.script.answer = ScriptedReply(text=ANSWER, chunks=4)  # earlier tests of the package change it
    add_server(fake)
    connect_on_dashboard(deployment.admin, SLUG)  # through nginx, as the maintainer does
    fake.wait_for(lambda: fake.connected(BOT_TOKEN), timeout=60)  # the discord service picked the token up
    thread = thread_of(fake, mention(fake, QUESTION))
    assert thread["name"] == QUESTION and thread["parent_id"] == SUPPORT
    [answer] = answers(fake, thread["id"])
    assert answer["content"].startswith(ANSWER)
    question_id = int(vote_ids(answer)[0].rsplit(":", 1)[1])
    with psycopg.connect(deployment.topology.database_url) as conn:
        row = conn.execute("SELECT channel, user_question, state FROM answering_question WHERE id = %s",
                           [question_id]).fetchone()
    assert row is not None and row[0] == "DISCORD" and QUESTION in row[1] and row[2] == "COMPLETE", row
    assert "Discord listener ready" in deployment.topology.log_text("discord")
    assert BOT_TOKEN not in deployment.topology.log_text("discord")
