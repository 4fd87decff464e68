"""Markdown as answers are written (CommonMark and GFM tables) to Slack's mrkdwn, in parts Slack accepts."""

from __future__ import annotations

import re
from collections.abc import Callable

from backend.channels.chat import fences
from backend.channels.chat.markdown import (
    AUTOLINK,
    BARE_URL,
    BOLD,
    BOLD_ITALIC,
    CODE_SPAN,
    ESCAPED,
    HEADING,
    ITALIC,
    LINK,
    SAFE_TARGET,
    STRIKE,
    Vault,
    aligned_table,
    break_fences,
    convert_lines,
    trim_url,
)
from backend.channels.chat.split import split_message

# Slack's limits (docs.slack.dev): a section block's text holds at most 3,000 characters; chat.startStream and
# chat.appendStream take at most 12,000 characters of markdown_text per call (that field takes markdown, not
# mrkdwn); chat.postMessage truncates a message's text past 40,000 characters.
SECTION_TEXT_LIMIT = 3000
STREAM_TEXT_LIMIT = 12000
MESSAGE_TEXT_LIMIT = 40000

RULE_LINE = "─" * 10
_BOLD_MARK = "\ue002"  # a placeholder for Slack's bold star while single stars become underscores

_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_QUOTE = re.compile(r"^ {0,3}(?:>[ \t]?)+(.*)$")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+(.*)$")
_TASK = re.compile(r"^\[([ xX])\][ \t]+")

# What a cut must not fall inside: a link or mention in <…> (only ours are left) and an escaped character.
_ATOMIC = re.compile(r"<[^<>\n]*>|&(?:amp|lt|gt);")


def to_mrkdwn(markdown: str) -> str:
    """Convert `markdown` to Slack mrkdwn; `&`, `<` and `>` are escaped everywhere but in the links made here."""
    # Slack shows a language tag as the block's first line of text: a fence is ``` alone.
    out, fence = convert_lines(markdown, fence_line=lambda _line, _fence, _closing: "```", code_line=_code_line,
                               text_line=lambda line: _block_line(line).rstrip(), table=_table)
    if fence is not None:
        out.append("```")  # An answer cut off inside a code block still shows a closed block.
    return "\n".join(out).strip("\n")


def slack_sections(markdown: str, limit: int = SECTION_TEXT_LIMIT) -> list[str]:
    """`markdown` as mrkdwn texts of at most `limit` characters, one per section block, code blocks closed."""
    return split_message(to_mrkdwn(markdown), limit, atomic=_ATOMIC)


def escape(text: str) -> str:
    """Slack's escaping: `&`, `<` and `>` as entities, so no text can form a link or a mention."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _code_line(line: str, fence: fences.Fence) -> str:
    """A line inside a code block: the fence's indentation removed, nothing else but Slack's escaping."""
    indent = len(fence.indent)
    stripped = line[indent:] if line[:indent].strip() == "" else line.lstrip(" \t")
    return escape(break_fences(stripped))


def _block_line(line: str) -> str:
    """One line outside code blocks and tables: heading, rule, quote, list item or paragraph text."""
    if (heading := HEADING.match(line)) is not None:
        text = BOLD.sub(lambda match: match.group(1) or match.group(2), heading.group(2) or "")
        return f"*{_inline(text)}*" if text.strip() else ""
    if _RULE.match(line):
        return RULE_LINE
    if (quote := _QUOTE.match(line)) is not None:
        return "> " + _block_line(quote.group(1))  # Slack has one level of quote; nested ones are merged.
    if (bullet := _BULLET.match(line)) is not None:
        indent, text = bullet.groups()
        if (task := _TASK.match(text)) is not None:
            text = ("☐ " if task.group(1) == " " else "☑ ") + text[task.end() :]
        return f"{indent}• {_inline(text)}"
    return _inline(line)


def _inline(text: str) -> str:
    """Inline spans of one line: code first (kept as it is), then links and URLs, escaping, emphasis."""
    vault = Vault()
    text = CODE_SPAN.sub(lambda match: vault.keep(f"`{escape(match.group(2))}`"), text)
    text = ESCAPED.sub(lambda match: vault.keep(escape(match.group(1))), text)
    text = LINK.sub(lambda match: _link(match, vault.keep), text)
    text = AUTOLINK.sub(lambda match: vault.keep(f"<{_target(match.group(1))}>"), text)
    text = BARE_URL.sub(lambda match: _bare_url(match.group(), vault.keep), text)
    return vault.restore(_emphasis(escape(break_fences(text))))


def _emphasis(text: str) -> str:
    """`**b**`/`__b__` to `*b*`, `*i*` to `_i_` (`_i_` is already Slack's), `~~s~~` to `~s~`."""
    text = BOLD_ITALIC.sub(f"{_BOLD_MARK}_\\1_{_BOLD_MARK}", text)
    text = BOLD.sub(lambda match: _BOLD_MARK + (match.group(1) or match.group(2)) + _BOLD_MARK, text)
    text = ITALIC.sub(r"_\1_", text)
    text = STRIKE.sub(r"~\1~", text)
    return text.replace(_BOLD_MARK, "*")


def _link(match: re.Match[str], keep: Callable[[str], str]) -> str:
    """A markdown link or image as a Slack link; a target that is not http(s) or mailto leaves only the text."""
    label, target = match.group(2), match.group(3).strip("<>").strip()
    if not SAFE_TARGET.match(target):
        return label  # Plain text: a javascript: or relative target is never made clickable.
    text = _emphasis(escape(break_fences(label or target))).replace("|", "｜")
    return keep(f"<{_target(target)}|{text}>")


def _target(url: str) -> str:
    """A URL as the target of a Slack link: `&` escaped; `|` and spaces, which would end it, encoded."""
    return url.replace("&", "&amp;").replace("|", "%7C").replace(" ", "%20")


def _bare_url(url: str, keep: Callable[[str], str]) -> str:
    """A bare URL stays text (Slack links it); trailing punctuation is the sentence's."""
    url, trailing = trim_url(url)
    return keep(escape(url)) + trailing


def _table(rows: list[str]) -> list[str]:
    """A GFM table as a code block with aligned columns (Slack has no tables; monospace keeps them readable)."""
    return ["```", *(escape(break_fences(line)) for line in aligned_table(rows)), "```"]
