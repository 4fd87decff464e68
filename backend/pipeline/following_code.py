"""The code example a context's last sentences introduce, when the chunk boundary fell right before it.

Splitters cut at blank lines, and a blank line precedes every code block: on a documentation corpus a
quarter of all chunk boundaries fall between a paragraph and the example it introduces ("…wrap the app in
the middleware." / the code doing it). A context ending on such a boundary would quote the promise without
the code; the next chunk of the same document holds it, so the context is completed from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from backend.pipeline.chunking import next_chunk_id
from backend.pipeline.code_fences import FENCE, closing_fence, open_fence
from backend.pipeline.contexts import Context, unrepeated
from backend.pipeline.excerpts import CODE_DIRECTIVES, DIRECTIVE

MAX_FOLLOWING_CODE_CHARS = 500
"""About half a chunk: a context grows by a short example or the tail of a cut block, never by most of another
passage, which would take the answer's room from passages ranked for the question (at 800 and 1,500 characters
the benchmark's offline answers lost more facts than they gained). A longer example is left out, not cut."""


def _code_directive(line: str) -> bool:
    found = DIRECTIVE.fullmatch(line.strip())
    return found is not None and found.group(1) in CODE_DIRECTIVES


def _last_line(text: str) -> str:
    lines = [line for line in text.rstrip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


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
    first, _, body = rest.partition("\n")
    if fence := FENCE.fullmatch(first):
        found = closing_fence(fence.group(1)).search(rest, len(first) + 1)
        return rest[: found.end()] if found else rest  # a splitter may leave the closing fence to the chunk after
    if _code_directive(first):
        size = _indented_block(body)
        return rest[: len(first) + 1 + size] if body[:size].strip() else ""
    if literal and rest[:1].isspace():
        return rest[: _indented_block(rest)]
    return ""


def following_code(text: str, following: str) -> str:
    """What to append to `text` from the document's next chunk (`following`): the rest of a code block the
    boundary cut (an open fence, an indented block), or the code block its closing prose introduces; "" when
    there is none, or when it is too long to add whole."""
    rest = unrepeated(text, following)
    last = _last_line(text)
    closing = open_fence(text)
    if closing is not None:
        found = closing.search(rest)
        suffix = rest[: found.end()] if found else rest
    elif last[:1].isspace():
        suffix = rest[: _indented_block(rest)]
    else:
        # After "::", ":" or a code directive whose body the boundary cut off, an indented block is the code.
        code = _leading_code(rest.lstrip("\n"), literal=last.strip().endswith(":") or _code_directive(last))
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
