"""A context cut into whole blocks for quoting: sections of sentences, list items, code blocks and tables."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from backend.pipeline.code_fences import FENCE
from backend.pipeline.contexts import PASSAGE_BREAK
from backend.pipeline.html_blocks import renders_nothing
from backend.pipeline.rst_inline import inline_markup
from backend.pipeline.text import ends_sentence, sentences_of, starts_sentence


class BlockKind(str, enum.Enum):
    SENTENCE = "sentence"
    ITEM = "item"
    CODE = "code"
    TABLE = "table"


@dataclass(frozen=True)
class Block:
    """One quotable piece; `section` changes at every heading and passage break, so blocks of one section are
    the only ones an extract may join. `paragraph` groups sentences for display."""

    kind: BlockKind
    text: str
    section: int
    heading: str = ""
    paragraph: int = 0
    language: str = ""
    fragment: bool = False
    """A sentence cut by the chunking, kept only because it is all its passage holds (shown with "…")."""

    @property
    def introduces(self) -> bool:
        """Whether it announces what follows ("Run this:"), so the block after it belongs to it."""
        return self.kind in (BlockKind.SENTENCE, BlockKind.ITEM) and self.text.rstrip("*_ ").endswith(":")


_ATX = re.compile(r" {0,3}#{1,6}(?:\s+(.*))?")
_ADORNMENT = re.compile(r"([=\-~^\"'`*+#_:.])\1{2,}\s*")
_RULE = re.compile(r" {0,3}([-*_=])(?:\s*\1){2,}\s*")
# The neutraliser writes "data:" as "data\u200b:" (pipeline.sanitize), so `.. py:data::` and `:data:` arrive with it.
DIRECTIVE = re.compile(r"\.\.\s+([\w:-]+?)\u200b?::\s*(.*)")
_COMMENT = re.compile(r"\.\.(?:\s|$)")
_ITEM = re.compile(r"(\s*)(?:[-*+\u2022]|\d{1,3}[.)]|#\.)\s+(\S.*)")
_FIELD = re.compile(r"\s*:[\w .-]+:(?:\s+\S.*)?")
_TABLE = re.compile(r"\s*(?:\|.*\||\+[-=+]{3,}\+?)\s*")
_SIMPLE_TABLE = re.compile(r"\s*=+(?:\s+=+)+\s*")
_RST_MARKERS = re.compile(r"^\.\.\s+[\w:-]+?\u200b?::|::\s*$|(?<!`)``[^`\s]|:\w+\u200b?:`", re.MULTILINE)
# A "~~~" fence only with a language: a bare row of tildes is as likely a reST title's underline.
# A line of four or more backticks alone is a reST title's underline, not a markdown fence.
_MD_MARKERS = re.compile(r"^ {0,3}(?:```(?:[^`\n]|[ \t]*$)|~~~+[ \t]*\w|#{1,6} )", re.MULTILINE)
CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "literalinclude", "doctest", "prompt"})
_PROSE_DIRECTIVES = frozenset({"note", "warning", "tip", "important", "hint", "caution", "attention", "danger",
                               "error", "admonition", "seealso", "versionadded", "versionchanged", "deprecated",
                               "topic", "sidebar", "rubric", "tab", "tab-item", "dropdown"})
# Object descriptions (Sphinx's `.. py:data:: NAME`, `.. function::`, `.. confval::`, `.. option::` …): the body
# is the definition of NAME, the very text a reference page exists for, so NAME heads a section of its own.
_DEFINITION_DIRECTIVES = frozenset({"data", "function", "class", "method", "attribute", "exception", "decorator",
                                    "decoratormethod", "classmethod", "staticmethod", "property", "type", "const",
                                    "member", "macro", "var", "enum", "enumerator", "struct", "confval", "option",
                                    "cmdoption", "envvar", "describe", "object", "setting", "directive", "role"})
_PROMPTS = (">>> ", "$ ")
MAX_NESTING = 6
_QUOTED = re.compile(r"^(?:>(?!>>)\s?)+(?:\[![A-Z]+\]\s*)?")  # a markdown quote's markers (and GitHub's [!NOTE])
_HYPHENATED = re.compile(r"(?<=[a-z])-\n(?=[a-z])")
_NUMBERED_HEADING = re.compile(r"\d{1,2}(?:\.\d{1,2}){1,3}\.?\s+[A-Z]")  # "2.1 Syntax"; "2 Syntax" may be a count


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


@dataclass
class _Raw:
    kind: str  # heading, para, item, code, table
    lines: list[str]
    language: str = ""


@dataclass
class _Parser:
    """Reads one passage line by line into raw blocks (markdown and reStructuredText, leniently)."""

    lines: list[str]
    rst: bool
    depth: int = 0
    pos: int = 0
    out: list[_Raw] = field(default_factory=list)

    def run(self) -> list[_Raw]:
        self._leading_fence_fragment()
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if not line.strip():
                self.pos += 1
            elif not any(step() for step in (self._fence, self._heading, self._rule, self._directive,
                                             self._table, self._item, self._indented)):
                self._paragraph()
        return self.out

    def _leading_fence_fragment(self) -> None:
        """A chunk may begin inside a fenced block: then its first fence closes one (a bare fence followed by
        one naming a language, or an odd count of fences after code-like text)."""
        fences = [i for i, line in enumerate(self.lines) if FENCE.fullmatch(line)]
        if not fences or FENCE.fullmatch(self.lines[fences[0]]).group(2):  # type: ignore[union-attr]
            return
        second = FENCE.fullmatch(self.lines[fences[1]]) if len(fences) > 1 else None
        before = self.lines[: fences[0]]
        after = self.lines[fences[0] + 1 : fences[1] if len(fences) > 1 else len(self.lines)]
        closes = _code_like(before) if any(line.strip() for line in before) else not _code_like(after)
        if (second is not None and second.group(2)) or (len(fences) % 2 == 1 and closes):
            self.pos = fences[0] + 1  # the code before it has lost its start: not shown

    def _fence(self) -> bool:
        opening = FENCE.fullmatch(self.lines[self.pos])
        if opening is None:
            return False
        run, body = opening.group(1), []
        self.pos += 1
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            self.pos += 1
            if line.strip().startswith(run[0] * len(run)) and not line.strip().strip(run[0]):
                break
            body.append(line)
        self.out.append(_Raw("code", body, opening.group(2)))
        return True

    def _heading(self) -> bool:
        line, nxt = self.lines[self.pos], self._at(self.pos + 1)
        atx = _ATX.fullmatch(line)
        if atx is not None:
            self._emit_heading(atx.group(1) or "", 1)
            return True
        if _ADORNMENT.fullmatch(line) and _is_title(nxt) and self._at(self.pos + 2).strip()[:1] == line[:1]:
            self._emit_heading(nxt, 3)  # overlined reST title
            return True
        if _is_title(line) and _ADORNMENT.fullmatch(nxt) and len(nxt.strip()) >= min(len(line.strip()), 3):
            self._emit_heading(line, 2)
            return True
        return False

    def _emit_heading(self, text: str, lines: int) -> None:
        self.out.append(_Raw("heading", [text.strip().rstrip("#").strip()]))
        self.pos += lines

    def _rule(self) -> bool:
        if _RULE.fullmatch(self.lines[self.pos]) and not _SIMPLE_TABLE.fullmatch(self.lines[self.pos]):
            self.pos += 1
            return True
        return False

    def _directive(self) -> bool:
        line = self.lines[self.pos].strip()
        found = DIRECTIVE.fullmatch(line)
        if found is None and not (self.rst and _COMMENT.match(line)):
            return False
        self.pos += 1
        body = self._take_indented()
        name = found.group(1).lower() if found else ""
        if name.rpartition(":")[2] in _DEFINITION_DIRECTIVES and found is not None and found.group(2).strip():
            self.out.append(_Raw("heading", [found.group(2).strip()]))
            self._nested([b for b in body if not _FIELD.fullmatch(b)])
        elif name in CODE_DIRECTIVES:
            code = _dedent([b for b in body if not _FIELD.fullmatch(b)])
            self.out.append(_Raw("code", code, found.group(2).split()[0] if found and found.group(2) else ""))
        elif name in _PROSE_DIRECTIVES:
            argument = found.group(2) if found else ""
            inner = ([argument] if argument and name in ("admonition", "topic", "sidebar", "rubric") else [])
            self._nested(inner + [b for b in body if not _FIELD.fullmatch(b)])
        return True  # images, tables of contents, comments and other machinery are not prose

    def _table(self) -> bool:
        if not (_TABLE.fullmatch(self.lines[self.pos]) or _SIMPLE_TABLE.fullmatch(self.lines[self.pos])):
            return False
        rows = []
        while self.pos < len(self.lines) and self.lines[self.pos].strip():
            rows.append(self.lines[self.pos].rstrip())
            self.pos += 1
        self.out.append(_Raw("table", rows))
        return True

    def _item(self) -> bool:
        line = self.lines[self.pos]
        found = _ITEM.fullmatch(line)
        if found is None and not (self.rst and _FIELD.fullmatch(line)):
            return False
        margin = _indent(line)
        parts = [found.group(2) if found else line.strip()]
        self.pos += 1
        while self.pos < len(self.lines):
            nxt = self.lines[self.pos]
            if not nxt.strip() or _ITEM.fullmatch(nxt) or FENCE.fullmatch(nxt) or _indent(nxt) < margin \
                    or (self.rst and _FIELD.fullmatch(nxt) and _indent(nxt) == margin):
                break
            parts.append(nxt.strip())
            self.pos += 1
        self.out.append(_Raw("item", parts))
        return True

    def _indented(self) -> bool:
        """An indented block: code after "::" (reST) or standing alone (markdown), else a quote or a definition."""
        line = self.lines[self.pos]
        if _indent(line) == 0 and not line.startswith(_PROMPTS):
            return False
        previous = self.out[-1] if self.out else None
        literal = previous is not None and previous.lines[-1:] != [] and previous.lines[-1].rstrip().endswith("::")
        body = self._take_indented() if _indent(line) else self._take_paragraph()
        if literal or line.lstrip().startswith(_PROMPTS) or (not self.rst and _indent(line) >= 4
                                                                     and (previous is None or previous.kind != "item")
                                                                     and not (previous is None and _cut_list(body))):
            self.out.append(_Raw("code", _dedent(body)))
        else:
            self._nested(body)
        return True

    def _nested(self, lines: list[str]) -> None:
        """An indented body (a quote, a note) parsed on its own; past a few levels, as one paragraph."""
        if self.depth < MAX_NESTING:
            self.out.extend(_Parser(_dedent(lines), self.rst, self.depth + 1).run())
        elif any(line.strip() for line in lines):
            self.out.append(_Raw("para", [line.strip() for line in lines if line.strip()]))

    def _paragraph(self) -> None:
        self.out.append(_Raw("para", self._take_paragraph()))

    def _take_paragraph(self) -> list[str]:
        lines = [_QUOTED.sub("", self.lines[self.pos].strip())]
        self.pos += 1
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if not line.strip() or FENCE.fullmatch(line) or _ATX.fullmatch(line) or _ITEM.fullmatch(line) \
                    or (_is_title(line) and _ADORNMENT.fullmatch(self._at(self.pos + 1))) \
                    or DIRECTIVE.fullmatch(line.strip()) or _RULE.fullmatch(line):
                break
            lines.append(_QUOTED.sub("", line.strip()))
            self.pos += 1
        return lines

    def _take_indented(self) -> list[str]:
        """The indented lines from here on, blank lines within kept."""
        body: list[str] = []
        while self.pos < len(self.lines):
            line = self.lines[self.pos]
            if line.strip() and _indent(line) == 0:
                break
            body.append(line)
            self.pos += 1
        while body and not body[-1].strip():
            body.pop()
        return body

    def _at(self, index: int) -> str:
        return self.lines[index] if 0 <= index < len(self.lines) else ""


def _is_title(line: str) -> bool:
    text = line.strip()
    return bool(text) and _indent(line) == 0 and len(text) <= 150 and not _ADORNMENT.fullmatch(text) \
        and not _ITEM.fullmatch(line) and not _TABLE.fullmatch(line)


def _dedent(lines: list[str]) -> list[str]:
    margin = min((_indent(line) for line in lines if line.strip()), default=0)
    return [line[margin:].rstrip() for line in lines]


def _code_like(lines: list[str]) -> bool:
    """Whether most lines read as code rather than prose: symbols or indentation, and not mostly plain words."""
    filled = [line for line in lines if line.strip()]
    coded = sum(1 for line in filled if not _prose_line(line)
                and re.search(r"[{}();=<>$\[\]]|^\s{2,}|^\s*(?:#|//|def |class |import )", line))
    return coded * 2 > len(filled) > 0


def _cut_list(lines: list[str]) -> bool:
    """A text opening indented was cut from what came before (a chunk starts inside a list item): it goes on as a
    list, not as code, when its lines are items and words (Node.js's nested option lists)."""
    items = sum(1 for line in lines if _ITEM.fullmatch(line))
    rest = [line for line in lines if line.strip() and not _ITEM.fullmatch(line)]
    return items > 0 and sum(1 for line in rest if _prose_line(line)) * 2 >= len(rest)


def mostly_prose(text: str) -> bool:
    """Whether most lines are plain words (a page about a file, not the file)."""
    filled = [line for line in text.splitlines() if line.strip()]
    return sum(1 for line in filled if _prose_line(line)) * 2 > len(filled)


def _prose_line(line: str) -> bool:
    tokens = line.split()
    words = sum(1 for t in tokens if re.fullmatch(r"[(\"']?[A-Za-z][a-z'’-]*[,.;:!?)\"']*", t))
    return len(tokens) >= 5 and words >= 0.6 * len(tokens)


def segment(text: str, *, code: bool = False, language: str = "", whole: bool = False) -> list[Block]:
    """The blocks of a context, passage by passage (each passage starts a section); a code file is cut at its
    blank lines into code blocks. `whole`: the text was written as it is (a note), not cut from a page."""
    blocks: list[Block] = []
    section = 0
    for passage in text.split(PASSAGE_BREAK):
        made = _code_file_blocks(passage, section, language) if code else _passage_blocks(passage, section, whole)
        blocks.extend(made)
        section = max((b.section for b in made), default=section) + 1
    return blocks


def _code_file_blocks(passage: str, section: int, language: str) -> list[Block]:
    groups = [g.strip("\n") for g in re.split(r"\n[ \t]*\n", passage.expandtabs(4))]
    return [Block(BlockKind.CODE, "\n".join(_dedent(g.splitlines())), section, paragraph=i, language=language)
            for i, g in enumerate(groups) if g.strip()]


def _passage_blocks(passage: str, section: int, whole: bool = False) -> list[Block]:
    """Blocks of one passage; a sentence the chunking cut at its start or end is dropped unless it is all (never
    in a `whole` text, which no chunking cut)."""
    rst = bool(_RST_MARKERS.search(passage)) and not _MD_MARKERS.search(passage)
    raws = _Parser(passage.expandtabs(4).splitlines(), rst).run()
    blocks: list[Block] = []
    dropped: list[tuple[int, Block]] = []
    heading = ""
    for index, raw in enumerate(raws):
        if raw.kind == "heading":
            section, heading = section + 1, inline_markup(raw.lines[0], rst=rst)
            continue
        if raw.kind != "para":
            blocks.extend(_block(raw, section, heading, index, rst=rst))
            continue
        for kind, piece in _prose(raw.lines):
            if kind == "heading":
                section, heading = section + 1, piece
                continue
            block = Block(BlockKind.SENTENCE, inline_markup(piece, rst=rst), section, heading, index)
            if not any(c.isalnum() for c in block.text) or renders_nothing(block.text):
                continue  # a lone "::", a row of dots, an empty HTML anchor
            first, last = index == 0 and not blocks and not dropped, index == len(raws) - 1
            if not whole and ((first and not starts_sentence(block.text)) or (last and not ends_sentence(piece))):
                dropped.append((len(blocks), block))
            else:
                blocks.append(block)
    if not blocks and dropped:
        return [Block(b.kind, b.text, b.section, b.heading, b.paragraph, fragment=True) for _, b in dropped]
    return blocks


def _block(raw: _Raw, section: int, heading: str, paragraph: int, *, rst: bool) -> list[Block]:
    if raw.kind == "item":
        return [Block(BlockKind.ITEM, inline_markup(" ".join(raw.lines), rst=rst), section, heading, paragraph)]
    body = "\n".join(raw.lines).strip("\n")
    if not body.strip():
        return []
    kind = BlockKind.TABLE if raw.kind == "table" else BlockKind.CODE
    return [Block(kind, body, section, heading, paragraph, language=raw.language)]


def _prose(lines: list[str]) -> list[tuple[str, str]]:
    """A paragraph's sentences, whole across its line breaks; a short unpunctuated line between sentences is a
    heading (PDF text has no markup for them)."""
    widest = max(len(line) for line in lines)
    pieces: list[tuple[str, str]] = []
    run: list[str] = []
    for i, line in enumerate(lines):
        if _soft_heading(lines, i, widest, after_heading=bool(pieces) and not run and pieces[-1][0] == "heading"):
            pieces.extend(("sentence", s) for s in sentences_of(_joined(run)))
            pieces.append(("heading", line))
            run = []
        else:
            run.append(line)
    pieces.extend(("sentence", s) for s in sentences_of(_joined(run)))
    return pieces


def _soft_heading(lines: list[str], i: int, widest: int, *, after_heading: bool = False) -> bool:
    """A short unpunctuated line between sentences (or right after a heading: "3 Utilities", then "3.1 Invoking
    asn1Parser"); a numbered one ("3.3 Invoking asn1Decoding") also before a line that opens with a name in
    lower case ("asn1Decoding generates …")."""
    line = lines[i]
    numbered = _NUMBERED_HEADING.match(line) is not None
    between = i + 1 < len(lines) and (i == 0 or after_heading or ends_sentence(lines[i - 1])) \
        and (numbered or starts_sentence(lines[i + 1]))
    return between and len(line) < 0.6 * widest and len(line.split()) <= 8 and line[-1].isalnum() \
        and (line[0].isupper() or line[0].isdigit())


def _joined(lines: list[str]) -> str:
    return " ".join(_HYPHENATED.sub("", "\n".join(lines)).split())
