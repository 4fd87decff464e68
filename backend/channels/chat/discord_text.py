"""Answer markdown as Discord messages: links that make no embed, no pings, in 2,000-character parts, footer."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from backend.channels.chat import fences
from backend.channels.chat.footer import (
    WEB_LINK_TEXT,
    bounded,
    is_web_link,
    refusal_sentence,
    shown_sources,
    trust_line,
)
from backend.channels.chat.markdown import (
    AUTOLINK,
    BOLD,
    CODE_SPAN,
    ESCAPED,
    HEADING,
    LINK,
    PRIVATE,
    Vault,
    aligned_table,
    break_fences,
    convert_lines,
    trim_url,
)
from backend.channels.chat.split import split_message

DISCORD_LIMIT = 2000  # characters of a message's content (discord.com/developers/docs, Create Message)
THREAD_NAME_LIMIT = 100  # characters of a thread's name
LONG_SPAN = DISCORD_LIMIT // 4  # an inline code span longer than this may be cut between two messages
MORE = "…"  # the end of a preview: more is coming
_ZWSP = "\u200b"

# Any http(s) URL, even glued to a word (Discord links it all the same), never over a placeholder.
_URL = re.compile(r"https?://[^\s<>\ue000-\ue00f]+", re.IGNORECASE)
_WEB = re.compile(r"https?://\S", re.IGNORECASE)
# Mass mentions, and the raw user, role and channel mentions a model or a source may have written.
_MASS_MENTION = re.compile(r"@(?=everyone|here)", re.IGNORECASE)
_RAW_MENTION = re.compile(r"<(?=(?:@[!&]?|#)\d+>)")
_ANY_MENTION = re.compile(r"<(?:@[!&]?|#)\d+>|<a?:\w+:\d+>|@(?:everyone|here)\b", re.IGNORECASE)
_CODE_LANGUAGE = re.compile(r"[A-Za-z0-9_+\-.#]+")
# What a cut must not fall inside: a masked link, a link in <…> and an inline code span.
_ATOMIC = re.compile(r"\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\(<[^<>\n]*>\)|<[^<>\n]*>|" + CODE_SPAN.pattern)
# Characters Discord's markdown reads in a source title; `>` only starts a quote at the start of a line.
_URL_SCHEME = re.compile(r"(?<=[a-zA-Z]):(?=//)")
_TITLE_SYNTAX = re.compile(r"([\\\[\]*_`~|<])")


def suppress_embeds(markdown: str) -> str:
    """`markdown` with every link wrapped in <…> (no embed preview) and no mention that pings.

    Bare URLs become `<url>`, `[label](url)` becomes `[label](<url>)`, images become links; text in code
    blocks and inline code spans is left as it is (Discord shows it verbatim and pings nobody from it).
    """
    return _convert(markdown, blocks=False)


def to_discord(markdown: str) -> str:
    """suppress_embeds, and what Discord does not render made readable: tables as aligned code blocks,
    headings below ### as bold lines, `~~~` and info-string fences as Discord's ```language fences."""
    return _convert(markdown, blocks=True)


def answer_parts(answer_markdown: str, footer: str, limit: int = DISCORD_LIMIT) -> list[str]:
    """The reply as Discord messages of at most `limit` characters: the converted answer, a blank line, the
    footer. Code blocks cut between messages are closed and reopened; the footer is never cut when it fits in
    one message, and ends the last one."""
    parts = split_message(to_discord(answer_markdown), limit, atomic=_ATOMIC)
    footer = footer.strip()
    if not footer:
        return parts
    if parts and len(parts[-1]) + 2 + len(footer) <= limit:
        return [*parts[:-1], parts[-1] + "\n\n" + footer]
    if len(footer) <= limit:
        return [*parts, footer]
    return [*parts, *split_message(footer, limit, atomic=_ATOMIC)]


def preview(markdown_so_far: str, limit: int = DISCORD_LIMIT) -> list[str]:
    """What to show while the answer streams: the partial answer converted and split, a code block still
    being written closed, and "…" at the end of the last part.

    Every part is cut as if the marker followed it, so a part that is no longer the last keeps its cut.
    """
    parts = split_message(to_discord(markdown_so_far), limit - len(MORE) - 1, atomic=_ATOMIC)
    if not parts:
        return [MORE]
    last = parts[-1]
    # A marker on a fence line would turn the closing fence into text: it goes on a line of its own there.
    glue = "\n" if fences.FENCE_LINE.match(last.rsplit("\n", 1)[-1]) else " "
    return [*parts[:-1], last + glue + MORE]


def footer_text(*, trust: float | None, refused: bool, references: list[dict[str, Any]], answer_url: str,
                guru_name: str, absolute: Callable[[str], str]) -> str:
    """The end of an answer in Discord markdown: numbered sources, trust band and the link to the web page;
    for a refusal, why the question was not answered."""
    web = f"[{WEB_LINK_TEXT}](<{_target(answer_url)}>)" if is_web_link(answer_url) else ""
    if refused:
        return " · ".join(part for part in (f"ℹ️ {refusal_sentence(escape_title(guru_name))}", web) if part)
    lines = []
    for source in shown_sources(references):
        link, title = absolute(source.link), escape_title(source.title)
        lines.append(f"[{source.number}] " + (f"[{title}](<{_target(link)}>)" if is_web_link(link) else title))
    meta = " · ".join(part for part in (trust_line(trust), web) if part)
    return "\n".join([*(["**Sources**", *lines] if lines else []), *([meta] if meta else [])])


def escape_title(text: str) -> str:
    """A title as plain Discord text on one line: markdown characters escaped, no link, no mention."""
    text = _TITLE_SYNTAX.sub(r"\\\1", bounded(text))
    text = _URL_SCHEME.sub(":" + _ZWSP, text)  # a URL in a title is text, not a link
    return _defuse("\\" + text if text[:1] in ("#", ">", "-") else text)


def thread_name(question: str) -> str:
    """A public thread's name from the question: one line, no mention, at most 100 characters, never empty."""
    text = _ANY_MENTION.sub(" ", PRIVATE.sub("", question))
    text = "".join(char for char in text if char.isprintable() or char.isspace())
    return bounded(text, THREAD_NAME_LIMIT) or "Question"


def _convert(markdown: str, *, blocks: bool) -> str:
    if blocks:
        out, _open = convert_lines(markdown, fence_line=_fence_line, code_line=_code_line, text_line=_block_line,
                                   table=_table)
    else:
        out, _open = convert_lines(markdown, fence_line=lambda line, _fence, _closing: line,
                                   code_line=lambda line, _fence: line, text_line=_inline, table=None)
    return "\n".join(out).strip("\n")  # a fence left open is closed by the split, at the end of each part


def _table(rows: list[str]) -> list[str]:
    """A GFM table as a code block with aligned columns (Discord has no tables; monospace keeps them readable)."""
    return ["```", *(break_fences(row) for row in aligned_table(rows)), "```"]


def _fence_line(_line: str, fence: fences.Fence, closing: bool) -> str:
    """An opening or closing fence; Discord knows only ``` fences with a bare language name."""
    language = None if closing else _CODE_LANGUAGE.match(fence.info)
    return fence.indent + "```" + (language.group() if language else "")


def _code_line(line: str, _fence: fences.Fence) -> str:
    # In a ``` block any run of three backticks ends it on Discord, so a run in the code is broken up.
    return break_fences(line)


def _block_line(line: str) -> str:
    heading = HEADING.match(line)
    if heading is not None and len(heading.group(1)) > 3:
        text = BOLD.sub(lambda match: match.group(1) or match.group(2), heading.group(2) or "").strip()
        return f"**{_inline(text)}**" if text else ""
    return _inline(line)


def _inline(text: str) -> str:
    """One line outside code blocks: code spans kept, links wrapped, mentions defused."""
    vault = Vault()
    text = CODE_SPAN.sub(lambda match: vault.keep(_code_span(match.group())), text)
    # An escaped character stays escaped, out of the link patterns' reach; but `\@everyone` still pings.
    text = ESCAPED.sub(lambda match: match.group() if match.group(1) == "@" else vault.keep(match.group()), text)
    text = LINK.sub(lambda match: vault.keep(_link(match)), text)
    text = AUTOLINK.sub(lambda match: vault.keep(match.group()), text)
    text = _URL.sub(lambda match: _bare_url(match.group(), vault.keep), text)
    return vault.restore(_defuse(break_fences(text)))


def _code_span(span: str) -> str:
    """An inline code span as written; one too long to be sure to stay in one message is read as text too,
    since the part it is cut into shows its URLs and mentions as text."""
    return span if len(span) <= LONG_SPAN else _wrap_urls(span)


def _link(match: re.Match[str]) -> str:
    """A markdown link or image as a masked link to <target>; a target that is not http(s) leaves the text."""
    label, target = match.group(2).strip(), _target(match.group(3).strip("<>").strip())
    if target.lower().startswith("mailto:") and label != target[7:]:
        return f"{_wrap_urls(label)} ({_defuse(target[7:])})"
    if not _WEB.match(target):
        return _wrap_urls(label)  # a javascript: or relative target is never made clickable
    if not label or label == target:
        return f"<{target}>"
    if "://" in label:  # Discord refuses a masked link whose text is a URL
        return f"{_wrap_urls(label)} (<{target}>)"
    return f"[{_defuse(label)}](<{target}>)"


def _target(url: str) -> str:
    """A URL as the target of a link in <…>: a space or `>`, which would end it, percent-encoded."""
    return url.replace(" ", "%20").replace(">", "%3E").replace("\n", "")


def _wrap_urls(text: str) -> str:
    vault = Vault()
    text = AUTOLINK.sub(lambda match: vault.keep(match.group()), text)
    return vault.restore(_defuse(_URL.sub(lambda match: _bare_url(match.group(), vault.keep), text)))


def _bare_url(url: str, keep: Callable[[str], str]) -> str:
    url, trailing = trim_url(url)
    return (keep(f"<{url}>") if url else "") + trailing


def _defuse(text: str) -> str:
    """Mentions that would ping, with a zero-width space that keeps them as they read but not as mentions."""
    return _RAW_MENTION.sub("<" + _ZWSP, _MASS_MENTION.sub("@" + _ZWSP, text))
