"""Broad questions: those a summary answers better than any one passage ("what is this about?", "compare…")."""

from __future__ import annotations

import re
from dataclasses import dataclass

_SUBJECT = (r"(this|the|your|these)\s+(project|guru|site|website|documentation|docs|library|tool|product|software|"
            r"repo|repository|framework|app|application|package|service|course|channel|video|videos|book|manual|"
            r"guide|knowledge base|sources?|material|content|topic)")
_DEIXIS = rf"(it|this|you|here|{_SUBJECT})"
_ABOUT_PATTERNS = (
    rf"\bwhat\s+(is|are)\s+{_SUBJECT}(\s+(all\s+)?about|\s+for)?\b",
    rf"\bwhat\s+(can|does|do)\s+{_DEIXIS}\s+(do|offer|cover|provide|support|teach|explain)\b",
    rf"\bwhat\s+(is|are)\s+{_DEIXIS}\s+(all\s+)?about\b",
    rf"\btell\s+me\s+about\s+{_DEIXIS}\b",
    r"\b(give|show)\s+(me\s+)?(an?\s+)?(overview|summary|rundown|introduction)\b",
    rf"\b(overview|summary|summari[sz]e)\b.*\b{_DEIXIS}\b",
    r"^\s*(overview|summary|summari[sz]e|tl;?dr)\b",
    rf"\bwhat\s+(are|is)\s+(the\s+)?(main|key|core|most important)\s+\w+(\s+of\s+{_DEIXIS})?",
    rf"\bwhat\s+(topics|subjects|things)\s+(do(es)?|are)\s+(covered|{_DEIXIS})",
    r"\bwhat\s+(is|gets)\s+covered\b",
    r"\bwhy\s+(should\s+i|would\s+i|use)\b.*\b(it|this)\b",
)
_COMPARE_PATTERNS = (
    r"\bcompare\b",
    r"\bdifferences?\s+between\b",
    r"\b\w+\s+(vs\.?|versus)\s+\w+",
    r"\bhow\s+(does|do|is|are)\s+.+\s+differ\b",
    r"\b(pros\s+and\s+cons|trade-?offs?)\b",
)


@dataclass(frozen=True)
class Breadth:
    """What kind of broad question it is: about the guru's subject as a whole, or a comparison."""

    about_subject: bool = False
    comparison: bool = False

    @property
    def broad(self) -> bool:
        return self.about_subject or self.comparison


def _names_subject(question: str, names: tuple[str, ...]) -> bool:
    """"What is TaskQ?" / "What can TaskQ do?" / "Tell me about TaskQ": the guru's own name as the subject."""
    for name in names:
        escaped = re.escape(name.strip())
        if escaped and re.search(
            rf"\b(what\s+(is|are|can|does)|tell\s+me\s+about|overview\s+of|summary\s+of)\s+{escaped}"
            rf"(\s+(about|for|do|offer|cover))?\s*\??\s*$", question, re.IGNORECASE):
            return True
    return False


def breadth_of(question: str, *, names: tuple[str, ...] = ()) -> Breadth:
    """Classify by the question's shape, never by the guru's content: rules the asker's wording triggers.

    `names` are what the guru is called (its name, and the name without a trailing "Guru").
    """
    text = question.strip()
    about = any(re.search(p, text, re.IGNORECASE) for p in _ABOUT_PATTERNS) or _names_subject(text, names)
    compare = any(re.search(p, text, re.IGNORECASE) for p in _COMPARE_PATTERNS)
    return Breadth(about_subject=about, comparison=compare and not about)


def guru_names(name: str, slug: str) -> tuple[str, ...]:
    """The names a question may call the guru by: "TaskQ Guru", "TaskQ", "taskq"."""
    bare = re.sub(r"\s*\bguru\b\s*$", "", name, flags=re.IGNORECASE).strip()
    return tuple(dict.fromkeys(n for n in (name.strip(), bare, slug.replace("-", " ")) if len(n) >= 2))
