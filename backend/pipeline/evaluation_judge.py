"""The optional LLM judge: how well an answer is supported by the references it was given, in [0, 1]."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backend.pipeline.evaluation import Seen
from backend.pipeline.llm_types import Message, Role

JUDGE_MAX_TOKENS = 200
MAX_REFERENCE_CHARS = 3000
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"supported": {"type": "number", "minimum": 0, "maximum": 1},
                   "unsupported_claims": {"type": "array", "items": {"type": "string"}}},
    "required": ["supported", "unsupported_claims"],
    "additionalProperties": False,
}


def judge_messages(question: str, answer: str, references: Sequence[Seen]) -> list[Message]:
    """A grading prompt: the share of the answer's claims that the numbered references state."""
    sources = "\n\n".join(f"[{n}] {r.title}\n{r.text[:MAX_REFERENCE_CHARS]}" for n, r in enumerate(references, 1))
    system = ("You check answers for groundedness. List every claim of the answer that the references do not "
              "state or directly imply, and give `supported`: the share of the answer's claims that they do "
              "support (1 when all are, 0 when none are). Judge only support, not style or completeness.")
    user = f"Question: {question}\n\nReferences:\n{sources}\n\nAnswer:\n{answer}"
    return [Message(Role.SYSTEM, system), Message(Role.USER, user)]


def judge_score(data: dict[str, Any]) -> float:
    """The judge's `supported` clipped to [0, 1]; anything unreadable counts as unsupported."""
    try:
        return min(1.0, max(0.0, float(data.get("supported", 0.0))))
    except (TypeError, ValueError):
        return 0.0
