"""The code example a context's last sentences introduce, when the chunk boundary fell right before it.

Splitters cut at blank lines, and a blank line precedes every code block: on a documentation corpus a
quarter of all chunk boundaries fall between a paragraph and the example it introduces ("…wrap the app in
the middleware." / the code doing it). A context ending on such a boundary would quote the promise without
the code; the next chunk of the same document holds it, so the context is completed from there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from backend.pipeline.contexts import Context

MAX_FOLLOWING_CODE_CHARS = 500
"""About half a chunk: a context grows by a short example or the tail of a cut block, never by most of another
passage, which would take the answer's room from passages ranked for the question (at 800 and 1,500 characters
the benchmark's offline answers lost more facts than they gained). A longer example is left out, not cut."""

_FENCE = re.compile(r"(`{3,}|~{3,})[^\n]*\n")
_DIRECTIVE = re.compile(r"\.\. (?:code-block|code|sourcecode)::[^\n]*\n")
_CHUNK_INDEX = re.compile(r"^(s\d+-g\d+-[0-9a-f]+-)(\d+)$")


def next_chunk_id(chunk_id: str) -> str | None:
    """The id of the chunk after this one in its document (see pipeline.chunking.chunk_id); None for other ids."""
    match = _CHUNK_INDEX.match(chunk_id)
    return f"{match.group(1)}{int(match.group(2)) + 1}" if match else None


def _remainder(text: str, following: str, max_overlap: int) -> str:
    """What `following` adds after `text`, its overlap with the end of `text` removed."""
    for size in range(min(len(text), len(following), max_overlap), 20, -1):
        if text.endswith(following[:size]):
            return following[size:]
    return following


def _last_line(text: str) -> str:
    lines = [line for line in text.rstrip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _open_fence(text: str) -> re.Pattern[str] | None:
    """The closing line of the fenced block `text` ends inside, or None when every fence it opens is closed."""
    closing: re.Pattern[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if closing is not None:
            closing = None if closing.fullmatch(stripped) else closing
        elif fence := _FENCE.match(stripped + "\n"):
            mark = fence.group(1)
            closing = re.compile(rf"{re.escape(mark[0])}{{{len(mark)},}}")
    return None if closing is None else re.compile(rf"^[ \t]*{closing.pattern}[ \t]*$", re.MULTILINE)


def _indented_block(text: str) -> int:
    """Length of the indented lines (and blank lines among them) `text` starts with."""
    end = 0
    for line in text.splitlines(keepends=True):
        if line.strip() and not line[:1].isspace():
            break
        end += len(line)
    return end


def _leading_code(rest: str, literal: bool) -> str:
    """The code block `rest` starts with (a fence, a code directive and its body, or an indented literal
    after "::"), or ""."""
    if fence := _FENCE.match(rest):
        close = re.compile(rf"^{re.escape(fence.group(1)[0])}{{{len(fence.group(1))},}}[ \t]*$", re.MULTILINE)
        found = close.search(rest, fence.end())
        return rest[: found.end()] if found else rest  # a splitter may leave the closing fence to the chunk after
    if directive := _DIRECTIVE.match(rest):
        body = _indented_block(rest[directive.end():])
        return rest[: directive.end() + body] if rest[directive.end():][:body].strip() else ""
    if literal and rest[:1].isspace():
        return rest[: _indented_block(rest)]
    return ""


def following_code(text: str, following: str, *, max_overlap: int = 600) -> str:
    """What to append to `text` from the document's next chunk (`following`): the rest of a code block the
    boundary cut (an open fence, an indented block), or the code block its closing prose introduces; "" when
    there is none, or when it is too long to add whole."""
    rest = _remainder(text, following, max_overlap)
    last = _last_line(text)
    closing = _open_fence(text)
    if closing is not None:
        found = closing.search(rest)
        suffix = rest[: found.end()] if found else rest
    elif last[:1].isspace():
        suffix = rest[: _indented_block(rest)]
    else:
        # After "::", ":" or a code directive whose body the boundary cut off, an indented block is the code.
        literal = last.strip().endswith(":") or bool(_DIRECTIVE.match(last.strip() + "\n"))
        code = _leading_code(rest.lstrip("\n"), literal=literal)
        suffix = f"\n\n{code}" if code else ""
    suffix = suffix.rstrip()
    if not suffix.strip() or len(suffix) > MAX_FOLLOWING_CODE_CHARS:
        return ""
    return suffix if suffix.startswith("\n") else f"\n{suffix}"


def completed(contexts: Sequence[Context], read: Callable[[list[str]], Mapping[str, str]]) -> list[Context]:
    """Each context completed from its last chunk's successor: the rest of the code block it ends inside, or
    the example its last sentences introduce (see `following_code`). `read` maps chunk ids to the texts of the
    chunks that exist (one call, for every context at once)."""
    after = [next_chunk_id(c.chunk_ids[-1]) if c.chunk_ids and not c.summary else None for c in contexts]
    wanted = [i for i in after if i is not None]
    texts = read(wanted) if wanted else {}
    done = []
    for context, following in zip(contexts, after, strict=True):
        code = following_code(context.text, texts[following]) if following is not None and following in texts else ""
        done.append(replace(context, text=context.text + code) if code else context)
    return done
