"""Neutralise markdown from sources and models: no live HTML tag and no script-capable link survives."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# Why a zero-width space rather than `&lt;`: it is inert both in prose and inside inline code (where an entity
# would show literally), so the rule needs no guess about where a code span ends — a guess an attacker could
# steer. "<\u200bimg" is no tag for CommonMark, HTML or marked, and reads as "<img"; chat bots defuse
# "@\u200beveryone" the same way.
ZWSP = "\u200b"
# CommonMark raw HTML and autolinks all start with "<" and a letter, "/", "!" or "?".
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_DANGEROUS_SCHEMES = ("javascript", "vbscript", "data", "file")
# Browsers drop tab and newlines anywhere in a URL, and renderers decode entities and backslash escapes in
# link destinations: each letter may hide behind a character reference, with those blanks in between.
_BLANK = r"(?:\t|&(?:tab|newline);|&#0*(?:9|10|13)\b;?|&#x0*(?:9|a|d)\b;?)"
_COLON = r"(?P<colon>:|&colon;|&#0*58;?|&#x0*3a;?|\\:)"
_SCHEME_CHAR = re.compile(r"[A-Za-z+.\-]")
_ENDS_IN_REFERENCE = re.compile(r"&#x?[0-9a-f]+;?$", re.IGNORECASE)
_FENCE_OPEN = re.compile(r"(`{3,})[^`]*|(~{3,}).*", re.DOTALL)
_LINE_END = re.compile(r"\r\n?")


def _letter(char: str) -> str:
    codes = {ord(char.lower()), ord(char.upper())}
    decimal = "|".join(str(c) for c in codes)
    hexa = "|".join(f"{c:x}" for c in codes)
    return rf"(?:{char}|&#0*(?:{decimal});?|&#x0*(?:{hexa});?)"


def _scheme_pattern() -> re.Pattern[str]:
    names = "|".join(f"{_BLANK}*".join(_letter(c) for c in name) for name in _DANGEROUS_SCHEMES)
    return re.compile(rf"(?:{names}){_BLANK}*{_COLON}", re.IGNORECASE | re.ASCII)


_SCHEME = _scheme_pattern()


def _starts_scheme(before: str) -> bool:
    """Whether a scheme name right after `before` would start the URL (not be the tail of a longer name)."""
    if not before or not _SCHEME_CHAR.match(before[-1]):
        return True
    return bool(_ENDS_IN_REFERENCE.search(before[-12:]))  # "&#x20javascript:" — the reference decodes to a blank


def _prose(segment: str, before: str) -> str:
    """Defuse one stretch of non-code text; `before` is the raw text preceding it on its line."""
    cuts: list[int] = []
    pos = 0
    while (found := _SCHEME.search(segment, pos)) is not None:
        if _starts_scheme(before + segment[max(0, found.start() - 16) : found.start()]):
            cuts.append(found.start("colon"))
            pos = found.end()
        else:
            pos = found.start() + 1
    pieces, last = [], 0
    for cut in cuts:
        pieces.append(segment[last:cut])
        last = cut
    pieces.append(segment[last:])
    return _TAG_START.sub("<" + ZWSP, ZWSP.join(pieces))


class StreamNeutraliser:
    """Neutralises text as it arrives; holds back only what the next delta could still change.

    Code in fences opened at column 0 is left as is (markdown shows it literally). Only such fences are
    trusted because nothing can contain them: an indented fence may belong to a list item whose end also
    ends the code, which this scanner cannot follow; text there is defused like prose, which is merely
    cautious. Line endings are normalised to "\\n", as CommonMark reads "\\r" as one too.
    """

    def __init__(self) -> None:
        self._fence: tuple[str, int] | None = None  # the open fence's character and length
        self._line = ""  # the current, unfinished line
        self._done = 0  # how much of it has been emitted
        self._carry = ""  # a "\r" that may be the first half of "\r\n"

    def feed(self, delta: str) -> str:
        text = self._carry + delta
        self._carry = "\r" if text.endswith("\r") else ""
        text = _LINE_END.sub("\n", text[:-1] if self._carry else text)
        out: list[str] = []
        *complete, partial = text.split("\n")
        for piece in complete:
            self._line += piece
            out.append(self._end_line() + "\n")
        self._line += partial
        out.append(self._emit_partial())
        return "".join(out)

    def finish(self) -> str:
        """The rest, at the end of the text."""
        tail = "\n" if self._carry else ""
        self._carry = ""
        return self._end_line() + tail if self._line or tail else ""

    def _end_line(self) -> str:
        line, done = self._line, self._done
        self._line, self._done = "", 0
        if self._fence is not None:
            char, length = self._fence
            if re.fullmatch(rf" {{0,3}}{re.escape(char)}{{{length},}}[ \t]*", line):
                self._fence = None
            return line[done:]
        if done == 0 and (opened := _FENCE_OPEN.fullmatch(line)) is not None:
            run = opened.group(1) or opened.group(2)
            self._fence = (run[0], len(run))
            return line
        return _prose(line[done:], line[max(0, done - 16) : done])

    def _emit_partial(self) -> str:
        line, done = self._line, self._done
        if self._fence is not None:
            if re.match(r" {0,3}(?:[`~]|$)", line) and done == 0:
                return ""  # could still be the closing fence
            self._done = len(line)
            return line[done:]
        if done == 0 and ("```".startswith(line) or "~~~".startswith(line) or line[:3] in ("```", "~~~")):
            return ""  # could still open a fence
        cut = line.rfind(" ")  # a match never spans a space, so text before the last one is final
        if cut <= done:
            return ""
        self._done = cut
        return _prose(line[done:cut], line[max(0, done - 16) : done])


def neutralise(text: str) -> str:
    """`text` with HTML tags made inert and dangerous link schemes broken; code fences kept as is. Idempotent."""
    stream = StreamNeutraliser()
    return stream.feed(text) + stream.finish()


def neutralise_with_offsets(text: str, offsets: list[int]) -> tuple[str, list[int]]:
    """neutralise(text), and where each of `offsets` (positions in `text`) lands in the result."""
    out = neutralise(text)
    if out == text:
        return out, list(offsets)
    landed: dict[int, int] = {}
    wanted = sorted(set(offsets))
    i = j = k = 0
    # The result is the text with "\u200b" inserted (never right before an original one) and "\r\n" or "\r"
    # turned into "\n", so one walk over both strings aligns them.
    while k < len(wanted):
        if i >= wanted[k] or i >= len(text) or j >= len(out):
            landed[wanted[k]] = j
            k += 1
        elif text[i] == out[j]:
            i, j = i + 1, j + 1
        elif text[i] == "\r":
            i += 1
            j += 0 if text[i : i + 1] == "\n" else 1
        else:
            j += 1  # an inserted character
    return out, [landed[o] for o in offsets]


def safe_link(url: str) -> str:
    """`url` if it is a web link (http, https) or a path on this site, else "": no other scheme is passed on."""
    cleaned = url.strip()
    if any(c in cleaned for c in "\t\r\n<>\"'`\\") or cleaned.startswith("//"):
        return ""
    try:
        parts = urlsplit(cleaned)
    except ValueError:
        return ""
    if parts.scheme.lower() in ("http", "https") and parts.netloc:
        return cleaned
    return cleaned if not parts.scheme and not parts.netloc and cleaned.startswith("/") else ""


def neutralise_line(text: str) -> str:
    """A title or other one-line text: neutralised, its line breaks turned to spaces."""
    return neutralise(" ".join(text.splitlines()))
