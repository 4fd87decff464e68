"""Which questions take the agentic path: what a question names, counted whole, the guru's own name aside."""

from __future__ import annotations

from backend.answering.agent_flow import entities


def test_a_question_names_code_and_names_counted_whole() -> None:
    assert entities("How do I retry a task?") == 0
    assert entities("What is the difference between url_defaults and url_value_preprocessor?") == 2
    assert entities("How do self.retry() and max_retries work together?") == 2
    assert entities("How do Celery and RabbitMQ work together?") == 2
    assert entities("What does MAX_CONTENT_LENGTH do?") == 1  # one constant, not three acronyms
    assert entities("How do I use Flask with Celery?", own=("Flask", "flask docs")) == 1
    assert entities("Which flag sets the port?") == 0
