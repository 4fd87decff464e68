"""Origin matching and pattern validation: exact origins, subdomain and port wildcards, and lookalikes."""

from __future__ import annotations

import pytest

from backend.widget.origins import origin_allowed, validate_pattern

EXACT = ["https://docs.example.com"]
SUBDOMAINS = ["https://*.example.com"]
LOCALHOST = ["http://localhost:*"]


@pytest.mark.parametrize(("origin", "patterns", "allowed"), [
    ("https://docs.example.com", EXACT, True),
    ("https://DOCS.Example.COM", EXACT, True),
    ("https://docs.example.com:443", EXACT, True),
    ("https://docs.example.com/", EXACT, True),
    ("https://docs.example.com", ["https://docs.example.com/"], True),
    ("https://docs.example.com", ["HTTPS://Docs.Example.com:443"], True),
    ("http://docs.example.com", EXACT, False),
    ("https://docs.example.com:8443", EXACT, False),
    ("https://docs.example.com.evil.com", EXACT, False),
    ("https://evil-docs.example.com", EXACT, False),
    ("https://docs.example.co", EXACT, False),
    ("https://docs.example.com/path", EXACT, False),
    ("https://user@docs.example.com", EXACT, False),
    ("https://a.example.com", SUBDOMAINS, True),
    ("https://a.b.c.example.com", SUBDOMAINS, True),
    ("https://example.com", SUBDOMAINS, False),
    ("https://example.com", [*SUBDOMAINS, "https://example.com"], True),
    ("https://evilexample.com", SUBDOMAINS, False),
    ("https://evil-example.com", SUBDOMAINS, False),
    ("https://docs.example.com.evil.com", SUBDOMAINS, False),
    ("https://example.com.evil.com", SUBDOMAINS, False),
    ("http://a.example.com", SUBDOMAINS, False),
    ("https://a.example.com:8443", SUBDOMAINS, False),
    ("https://a.example.com:8443", ["https://*.example.com:*"], True),
    ("http://localhost:3000", LOCALHOST, True),
    ("http://localhost", LOCALHOST, True),
    ("http://LOCALHOST:8080", LOCALHOST, True),
    ("https://localhost:3000", LOCALHOST, False),
    ("http://localhost.evil.com:3000", LOCALHOST, False),
    ("http://localhost:3000", ["http://localhost:3000"], True),
    ("http://localhost:3001", ["http://localhost:3000"], False),
    ("http://localhost:80", ["http://localhost"], True),
    ("http://[::1]:8000", ["http://[::1]:*"], True),
    ("http://127.0.0.1:8000", ["http://127.0.0.1:8000"], True),
    ("https://anything.org", ["*"], True),
    ("https://anything.org", [], False),
    ("https://anything.org", ["https://*"], False),
    ("null", ["*"], False),
    ("", ["*"], False),
    ("null", ["null"], False),
    ("docs.example.com", EXACT, False),
    ("https://docs.example.com:*", EXACT, False),
    ("https://docs.example.com", ["docs.example.com", 42, None], False),  # type: ignore[list-item]
    ("https://evil.org", "*.example.com", False),
    ("https://docs.example.com", "https://docs.example.com", True),
])
def test_origin_allowed(origin: str, patterns: list[str], allowed: bool) -> None:
    assert origin_allowed(origin, patterns) is allowed


@pytest.mark.parametrize(("pattern", "canonical"), [
    ("https://docs.example.com", "https://docs.example.com"),
    ("  HTTPS://Docs.Example.com:443/ ", "https://docs.example.com"),
    ("https://docs.example.com:8443", "https://docs.example.com:8443"),
    ("https://*.example.com", "https://*.example.com"),
    ("http://localhost:*", "http://localhost:*"),
    ("http://*.localhost", "http://*.localhost"),
    ("https://bücher.example", "https://xn--bcher-kva.example"),
    ("*", "*"),
])
def test_validate_pattern_canonicalises(pattern: str, canonical: str) -> None:
    assert validate_pattern(pattern) == canonical


@pytest.mark.parametrize("pattern", [
    "", "   ", "null", "docs.example.com", "*.example.com", "ftp://example.com", "https://example.com/docs",
    "https://example.com?x=1", "https://user@example.com", "https://*", "https://*.com", "https://docs.*.com",
    "https://*example.com", "https://ex ample.com", "https://example.com:99999", "https://-bad-.com",
    "https://a..b.com", "https://*.[::1]", 42,
])
def test_validate_pattern_refuses_junk(pattern: str) -> None:
    with pytest.raises(ValueError):
        validate_pattern(pattern)
