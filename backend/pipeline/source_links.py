"""Links and imports between a guru's documents: what a document's text points at, resolved to other documents."""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Protocol
from urllib.parse import SplitResult, unquote, urljoin, urlsplit, urlunsplit

from backend.pipeline.rst_toctree import toctree_entries
from backend.pipeline.youtube_urls import parse_youtube_url

MAX_LINKS_PER_DOCUMENT = 200
MAX_IMPORTS_PER_FILE = 200
MAX_TEXT_CHARS = 500_000

REPOSITORY = "github_repo"
YOUTUBE = "youtube"
PDF = "pdf"

Target = tuple[int, str]  # a document inside its guru: (source_id, key)

_DEFAULT_PORTS = {"http": 80, "https": 443}
_DOC_EXTENSIONS = (".md", ".rst", ".txt", ".html", ".mdx")
_DIRECTORY_PAGES = ("index.md", "index.rst", "README.md")
_DOC_ROLE_SUFFIXES = (".rst", ".md", ".txt", "/index.rst")
_SCRIPT_EXTENSIONS = frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"})
_SCRIPT_SUFFIXES = ("", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".json", "/index.js", "/index.ts")
_FORGE_VIEWS = frozenset({"blob", "tree", "raw"})

# One pass, left to right: a markdown link or reference definition, an HTML href, an RST :doc:/:ref: role, or
# a bare URL. The alternative that matches consumes the text, so a URL inside a markdown link is examined once.
_LINK = re.compile(
    r"\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\(\s*(?:<(?P<angle>[^>\n]+)>|(?P<inline>[^)\s]+))[^)\n]*\)"
    r"|^[ ]{0,3}\[[^\]\n]+\]:[ \t]*<?(?P<definition>[^\s>]+)>?"
    r"|\bhref\s*=\s*[\"'](?P<href>[^\"'\s]+)[\"']"
    r"|:(?:std:)?(?P<role>doc|ref):`(?P<role_target>[^`\n]+)`"
    r"|(?P<url>https?://[^\s<>\"'`\[\]{}|\\^]+)", re.MULTILINE | re.IGNORECASE)
_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:", re.IGNORECASE)
_WEB = re.compile(r"https?://", re.IGNORECASE)
_PAGE_FRAGMENT = re.compile(r"page=(\d+)")
_PDF_PAGE_KEY = re.compile(r"page-(\d+)")
_TRAILING = ".,;:!?*"
_LABEL = re.compile(r"^[ \t]*\.\.[ \t]+_([^:\n`]+):[ \t]*$", re.MULTILINE)
_PYTHON_IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+(?P<base>\.*[\w.]*)[ \t]+import[ \t]+(?P<names>\([^)]*\)|[^\n#;]*)"
    r"|import[ \t]+(?P<modules>[\w. \t,]+))", re.MULTILINE)
_SCRIPT_IMPORT = re.compile(
    r"(?:\bimport\s+(?:[\w$*{}\s,]{1,2000}?\s+from\s+)?|\bexport\s+[\w$*{}\s,]{1,2000}?\s+from\s+"
    r"|\b(?:require|import)\s*\(\s*)[\"'](\.{1,2}(?:/[^\"'\n]*)?)[\"']")


class LinkedDocument(Protocol):
    """What link and import resolution reads of a document (source_graph.GraphDocument has it)."""

    @property
    def source_id(self) -> int: ...
    @property
    def key(self) -> str: ...
    @property
    def link(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str: ...


@dataclass(frozen=True)
class LinkTables:
    """Lookups built once per guru: URLs, forge paths, videos, repository files, RST labels and roots, modules."""

    urls: Mapping[str, set[Target]]
    forge_paths: Mapping[tuple[str, str, str, str], set[Target]]
    videos: Mapping[str, set[Target]]
    files: Mapping[int, Mapping[str, str]]  # per source: normalised path -> the document's key
    labels: Mapping[int, Mapping[str, set[str]]]  # per source: lower-cased label -> keys defining it
    doc_roots: Mapping[int, str]
    modules: Mapping[int, Mapping[str, tuple[str, ...]]]  # per source: dotted suffix -> keys of shortest paths


def normalise_url(url: str) -> str | None:
    """http(s) URL with lower-case scheme and host, no fragment, default port or trailing "/" or "/index.html"."""
    parts = _split(url)
    if parts is None:
        return None
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname or ""
    port = parts.port
    netloc = host if port is None or port == _DEFAULT_PORTS[parts.scheme.lower()] else f"{host}:{port}"
    path = parts.path
    for suffix in ("/index.html", "/index.htm"):
        path = path.removesuffix(suffix)
    return urlunsplit((parts.scheme.lower(), netloc, path.rstrip("/"), parts.query, ""))


def _split(url: str) -> SplitResult | None:
    if not _WEB.match(url.strip()):
        return None
    try:
        parts = urlsplit(url.strip())
        _ = parts.port  # a malformed port ("ex.com:99999") raises only when read
    except ValueError:
        return None
    return parts if parts.hostname else None


def clean_path(key: str) -> str:
    """A repository key as a normalised relative path ("" for the root)."""
    path = posixpath.normpath(key.strip().lstrip("/"))
    return "" if path == "." else path


def _inside(path: str) -> str | None:
    """The normalised path, or None when it leaves the repository."""
    path = posixpath.normpath(path)
    return None if path in (".", "..") or path.startswith("../") else path


def link_tables(documents: Sequence[LinkedDocument]) -> LinkTables:
    """The lookups every document's links and imports are resolved against."""
    urls: dict[str, set[Target]] = defaultdict(set)
    forge: dict[tuple[str, str, str, str], set[Target]] = defaultdict(set)
    videos: dict[str, set[Target]] = defaultdict(set)
    files: dict[int, dict[str, str]] = defaultdict(dict)
    for document in documents:
        for address in {document.key, document.link}:
            _register_url(address, document, urls, forge)
        if document.kind == YOUTUBE:
            videos[document.key].add((document.source_id, document.key))
        if document.kind == REPOSITORY and (path := clean_path(document.key)):
            files[document.source_id].setdefault(path, document.key)
    repository = [document for document in documents if document.kind == REPOSITORY]
    return LinkTables(urls=urls, forge_paths=forge, videos=videos, files=files, labels=_labels(repository),
                      doc_roots=_doc_roots(files), modules=_modules(files))


def _register_url(address: str, document: LinkedDocument, urls: dict[str, set[Target]],
                  forge: dict[tuple[str, str, str, str], set[Target]]) -> None:
    normal = normalise_url(address)
    if normal is None:
        return
    target = (document.source_id, document.key)
    # Every page of a PDF shares one URL: "#page=N" (in the link, or else the "page-N" key) tells them apart,
    # and the bare URL is page 1.
    page = _PAGE_FRAGMENT.fullmatch(urlsplit(address.strip()).fragment)
    if page is None and document.kind == PDF:
        page = _PDF_PAGE_KEY.fullmatch(document.key)
    if page is not None:
        urls[f"{normal}#page={page.group(1)}"].add(target)
        if page.group(1) != "1":
            return
    urls[normal].add(target)
    if (path := _forge_path(address)) is not None:
        forge[path].add(target)


def _forge_path(url: str) -> tuple[str, str, str, str] | None:
    """(host, owner, repository, file path) of a forge blob/tree/raw URL, whatever the branch or commit."""
    parts = _split(url)
    if parts is None:
        return None
    segments = [segment for segment in parts.path.split("/") if segment]
    if len(segments) > 3 and segments[2] == "-":  # GitLab: /owner/repo/-/blob/ref/path
        del segments[2]
    if len(segments) < 5 or segments[2] not in _FORGE_VIEWS:
        return None
    return ((parts.hostname or "").lower(), segments[0].lower(), segments[1].lower(), "/".join(segments[4:]))


def _labels(repository: Iterable[LinkedDocument]) -> dict[int, dict[str, set[str]]]:
    labels: dict[int, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for document in repository:
        for found in _LABEL.finditer(document.text[:MAX_TEXT_CHARS]):
            labels[document.source_id][_label(found.group(1))].add(document.key)
    return labels


def _label(label: str) -> str:
    """Sphinx labels ignore case and runs of spaces; hyphens and underscores stay as written."""
    return " ".join(label.split()).lower()


def _doc_roots(files: Mapping[int, Mapping[str, str]]) -> dict[int, str]:
    """Per source, the directory of the highest conf.py or index.rst (conf.py first on a tie)."""
    roots: dict[int, str] = {}
    for source_id, paths in files.items():
        markers = [path for path in paths if posixpath.basename(path) in ("conf.py", "index.rst")]
        if markers:
            best = min(markers, key=lambda path: (path.count("/"), not path.endswith("conf.py"), path))
            roots[source_id] = posixpath.dirname(best)
    return roots


def _modules(files: Mapping[int, Mapping[str, str]]) -> dict[int, dict[str, tuple[str, ...]]]:
    """Per source, every dotted suffix of every Python file ("a/b/c.py": "c", "b.c", "a.b.c") -> shortest paths."""
    modules: dict[int, dict[str, tuple[str, ...]]] = {}
    for source_id, paths in files.items():
        found: dict[str, list[str]] = defaultdict(list)
        for path in paths:
            if not path.endswith(".py"):
                continue
            parts = path[:-3].split("/")
            if parts[-1] == "__init__":
                parts.pop()
            for start in range(len(parts)):
                found[".".join(parts[start:])].append(path)
        modules[source_id] = {name: _shortest(candidates, paths) for name, candidates in found.items()}
    return modules


def _shortest(candidates: list[str], keys: Mapping[str, str]) -> tuple[str, ...]:
    # "a/b.py" wins over "tests/fixtures/a/b.py"; equally deep candidates are all kept.
    depth = min(path.count("/") for path in candidates)
    return tuple(sorted(keys[path] for path in candidates if path.count("/") == depth))


def linked_targets(document: LinkedDocument, tables: LinkTables) -> set[Target]:
    """Documents this one's text links to: absolute URLs to any source, relative links within its own source, and
    in repository files RST :doc:/:ref: roles and toctree entries; at most MAX_LINKS_PER_DOCUMENT links examined."""
    examined: set[tuple[str, str]] = set()
    targets: set[Target] = set()
    entries = toctree_entries(document.text[:MAX_TEXT_CHARS]) if document.kind == REPOSITORY else iter(())
    for role, target in chain(_raw_links(document.text, roles=document.kind == REPOSITORY),
                              (("doc", entry) for entry in entries)):
        if (role, target) in examined:
            continue
        examined.add((role, target))
        targets |= _resolve(document, role, target, tables)
        if len(examined) >= MAX_LINKS_PER_DOCUMENT:
            break
    targets.discard((document.source_id, document.key))
    return targets


def _raw_links(text: str, *, roles: bool) -> Iterator[tuple[str, str]]:
    """("doc" | "ref" | "link", target) in the order they appear; links to nowhere (mailto:, "#top") left out."""
    for found in _LINK.finditer(text[:MAX_TEXT_CHARS]):
        if found.group("role"):
            if roles:
                yield found.group("role").lower(), _role_target(found.group("role_target"))
            continue
        url = found.group("url")
        target = _trim_url(url) if url else (found.group("angle") or found.group("inline")
                                             or found.group("definition") or found.group("href") or "").strip()
        if target.startswith("//"):
            target = f"https:{target}"
        if target and not target.startswith("#") and (_WEB.match(target) or not _SCHEME.match(target)):
            yield "link", target


def _trim_url(url: str) -> str:
    """A bare URL without the sentence's punctuation; a closing parenthesis stays when the URL opened one."""
    while url and (url[-1] in _TRAILING or (url[-1] == ")" and url.count(")") > url.count("("))):
        url = url[:-1]
    return url


def _role_target(inner: str) -> str:
    inner = inner.strip()
    if inner.endswith(">") and "<" in inner:
        inner = inner[inner.rfind("<") + 1 : -1]
    return inner.strip().lstrip("~!")


def _resolve(document: LinkedDocument, role: str, target: str, tables: LinkTables) -> set[Target]:
    source_id = document.source_id
    if role == "ref":
        return {(source_id, key) for key in tables.labels.get(source_id, {}).get(_label(target), set())}
    if role == "doc" or (document.kind == REPOSITORY and not _WEB.match(target)):
        root = tables.doc_roots.get(source_id, "")
        paths = _doc_role_paths(document.key, target, root) if role == "doc" else _file_paths(document.key, target)
        return {(source_id, key) for key in _first_key(paths, tables.files.get(source_id, {}))}
    if _WEB.match(target):
        return _url_targets(target, tables)
    base = next((address for address in (document.key, document.link) if _WEB.match(address)), "")
    if not base:
        return set()
    # Relative links stay inside the page's own source, even when another source crawled the same site.
    return {found for found in _url_targets(urljoin(base, target), tables) if found[0] == document.source_id}


def _url_targets(url: str, tables: LinkTables) -> set[Target]:
    normal = normalise_url(url)
    if normal is None:
        return set()
    page = _PAGE_FRAGMENT.fullmatch(urlsplit(url).fragment)
    for candidate in ([f"{normal}#page={page.group(1)}"] if page else []) + [normal]:
        if candidate in tables.urls:
            return set(tables.urls[candidate])
    forge = _forge_path(url)
    if forge is not None and forge in tables.forge_paths:
        return set(tables.forge_paths[forge])
    try:
        video = parse_youtube_url(url)
    except ValueError:
        return set()
    return set(tables.videos.get(video.id, set())) if video.kind == "video" else set()


def _file_paths(key: str, target: str) -> list[str]:
    """Where a relative link in a repository file may point: from its directory, or from the root for "/x"."""
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    directory = "" if path.startswith("/") else posixpath.dirname(clean_path(key))
    joined = _inside(posixpath.join(directory, path.lstrip("/"))) if path else None
    if joined is None:
        return []
    stem, extension = posixpath.splitext(joined)
    candidates = [joined] + [joined + added for added in _DOC_EXTENSIONS]
    candidates += [stem + replaced for replaced in _DOC_EXTENSIONS if extension]
    return candidates + [f"{joined}/{page}" for page in _DIRECTORY_PAGES]


def _doc_role_paths(key: str, target: str, root: str) -> list[str]:
    """:doc:`x` from the file's directory; :doc:`/x` from the documentation root (conf.py's or index.rst's)."""
    directory = root if target.startswith("/") else posixpath.dirname(clean_path(key))
    path = _inside(posixpath.join(directory, target.lstrip("/")))
    return [] if path is None else [path + suffix for suffix in _DOC_ROLE_SUFFIXES]


def _first_key(candidates: Iterable[str], files: Mapping[str, str]) -> set[str]:
    """The key of the first candidate path that is a file of the repository, or nothing."""
    return next(({files[path]} for path in candidates if path in files), set())


def imported_targets(document: LinkedDocument, tables: LinkTables) -> set[Target]:
    """Files of the same repository that a Python or JavaScript/TypeScript file imports (regexes, never run)."""
    if document.kind != REPOSITORY:
        return set()
    path = clean_path(document.key)
    files = tables.files.get(document.source_id, {})
    extension, text = posixpath.splitext(path)[1].lower(), document.text[:MAX_TEXT_CHARS]
    if extension == ".py":
        keys = _python_imports(path, text, files, tables.modules.get(document.source_id, {}))
    elif extension in _SCRIPT_EXTENSIONS:
        keys = _script_imports(path, text, files)
    else:
        return set()
    return {(document.source_id, key) for key in keys if key != document.key}


def _python_imports(path: str, text: str, files: Mapping[str, str],
                    modules: Mapping[str, tuple[str, ...]]) -> set[str]:
    found: set[str] = set()
    for count, statement in enumerate(_PYTHON_IMPORT.finditer(text)):
        if count >= MAX_IMPORTS_PER_FILE:
            break
        if statement.group("modules") is not None:
            for name in _imported_names(statement.group("modules")):
                found.update(modules.get(name, ()))
            continue
        base, names = statement.group("base"), _imported_names(statement.group("names"))
        if base.startswith("."):
            found |= _relative_imports(posixpath.dirname(path), base, names, files)
            continue
        # `from a.b import c`: a.b itself, and c when c is a module rather than a name defined in a.b.
        for module in [base] + [f"{base}.{name}" for name in names]:
            found.update(modules.get(module, ()))
    return found


def _imported_names(names: str) -> list[str]:
    """The names of `a.b as x, c` or `(c,  # why\\n d)`, without aliases, comments or `*`."""
    names = re.sub(r"#[^\n]*", "", names).strip("()")
    words = (item.split() for item in names.replace("\\", " ").split(","))
    return [item[0] for item in words if item and item[0] != "*"]


def _relative_imports(package: str, base: str, names: list[str], files: Mapping[str, str]) -> set[str]:
    """`from ..pkg.mod import z` in a/b/c.py: a/pkg/mod.py (or its __init__.py), and a/pkg/mod/z.py if z is one."""
    level = len(base) - len(base.lstrip("."))
    directory = package
    for _ in range(level - 1):
        if not directory:
            return set()  # the import climbs above the repository root
        directory = posixpath.dirname(directory)
    rest = base[level:]
    module = posixpath.join(directory, *rest.split(".")) if rest else directory
    found: set[str] = set()
    for path in [module] + [posixpath.join(module, name) for name in names]:
        found |= _first_key([f"{path}.py", posixpath.join(path, "__init__.py")] if path else ["__init__.py"], files)
    return found


def _script_imports(path: str, text: str, files: Mapping[str, str]) -> set[str]:
    found: set[str] = set()
    for count, statement in enumerate(_SCRIPT_IMPORT.finditer(text)):
        if count >= MAX_IMPORTS_PER_FILE:
            break
        base = _inside(posixpath.join(posixpath.dirname(path), statement.group(1).split("?", 1)[0]))
        if base is None:
            continue
        candidates = [base + suffix for suffix in _SCRIPT_SUFFIXES]
        if base.endswith(".js"):  # TypeScript's ESM style imports "./x.js" for the source file x.ts
            candidates += [base[:-3] + ".ts", base[:-3] + ".tsx"]
        found |= _first_key(candidates, files)
    return found
