"""Ingestion limits and fetch policy (issue #4)."""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from backend.adapters.net_guard import parse_allow_entry
from backend.config.env import env_bool, env_int, env_list, env_path, env_str

_DATA_DIR = env_path("OPENGURU_DATA_DIR", Path(__file__).resolve().parents[4] / "var")

# Hosts or networks (CIDR) that may be fetched although they are internal, e.g. "wiki.corp,10.0.0.0/8"; an entry
# with a port ("127.0.0.1:8201", "wiki.corp:8443", "[::1]:8201") allows that port only, on every redirect hop too.
OPENGURU_FETCH_ALLOWLIST = env_list("OPENGURU_FETCH_ALLOWLIST", [])
for _entry in OPENGURU_FETCH_ALLOWLIST:
    try:
        parse_allow_entry(_entry)
    except ValueError as _exc:
        raise ImproperlyConfigured(f"OPENGURU_FETCH_ALLOWLIST: {_exc}") from _exc
OPENGURU_FETCH_TIMEOUT = env_int("OPENGURU_FETCH_TIMEOUT", 20)
OPENGURU_FETCH_MAX_BYTES = env_int("OPENGURU_FETCH_MAX_BYTES", 5 * 1024 * 1024)
OPENGURU_FETCH_USER_AGENT = env_str("OPENGURU_FETCH_USER_AGENT", "OpenGuruBot/0.1 (+https://github.com/openguru)")
OPENGURU_CRAWL_MAX_PAGES = env_int("OPENGURU_CRAWL_MAX_PAGES", 500)
OPENGURU_CRAWL_MAX_DEPTH = env_int("OPENGURU_CRAWL_MAX_DEPTH", 3)
# Videos taken from one YouTube playlist; a longer playlist is cut there and the source's note says so.
OPENGURU_PLAYLIST_MAX_VIDEOS = env_int("OPENGURU_PLAYLIST_MAX_VIDEOS", 1000)
if OPENGURU_PLAYLIST_MAX_VIDEOS < 1:
    raise ImproperlyConfigured("OPENGURU_PLAYLIST_MAX_VIDEOS must be at least 1")
OPENGURU_GITHUB_TOKEN = env_str("OPENGURU_GITHUB_TOKEN")
OPENGURU_GITHUB_MAX_FILE_BYTES = env_int("OPENGURU_GITHUB_MAX_FILE_BYTES", 10 * 1024 * 1024)
OPENGURU_REPOS_DIR = env_path("OPENGURU_REPOS_DIR", _DATA_DIR / "repos")
# Sources indexed by one guru at the same time, per kind; more wait (re-queued, never dropped).
OPENGURU_INGEST_CONCURRENCY = env_int("OPENGURU_INGEST_CONCURRENCY", 2)
# Scheduled re-index: Git repository re-sync and website re-crawl intervals (hours; 0 turns it off).
OPENGURU_GITHUB_RESYNC_HOURS = env_int("OPENGURU_GITHUB_RESYNC_HOURS", 24)
OPENGURU_WEBSITE_RECRAWL_HOURS = env_int("OPENGURU_WEBSITE_RECRAWL_HOURS", 0)
# Local git remotes (file://) are refused by default: a path on the worker is not a user's repository.
OPENGURU_GIT_ALLOW_FILE_URLS = env_bool("OPENGURU_GIT_ALLOW_FILE_URLS", False)
# Seconds the submit-time reachability check of a Git remote (git ls-remote) may take before it is refused.
OPENGURU_GIT_CHECK_TIMEOUT = env_int("OPENGURU_GIT_CHECK_TIMEOUT", 8)
# A PEM file of certificates to trust for https Git remotes (a self-hosted server with an internal CA).
OPENGURU_GIT_CA_BUNDLE = env_str("OPENGURU_GIT_CA_BUNDLE")

# What one source may take while it indexes (issue #12); a source past a bound is FAILED with a message naming it.
# 5,000,000 characters are a ~2,000-page book or a few hundred documentation pages, ~5,000 chunks of 254 tokens
# (about two minutes of local embedding on two cores); a 39 KB PDF can hold 8 MB of text, so the text is counted
# as it is extracted, not judged by the file's size.
OPENGURU_SOURCE_MAX_CHARS = env_int("OPENGURU_SOURCE_MAX_CHARS", 5_000_000)
OPENGURU_SOURCE_MAX_CHUNKS = env_int("OPENGURU_SOURCE_MAX_CHUNKS", 20_000)
# Below Celery's soft time limit (25 min), so the source fails with this message rather than a killed task.
OPENGURU_SOURCE_MAX_SECONDS = env_int("OPENGURU_SOURCE_MAX_SECONDS", 20 * 60)
# Growth of the worker's resident memory during one source; the local embedding model and its buffers take
# ~470 MB on first use, which a first source is charged for.
OPENGURU_SOURCE_MAX_MEMORY_MB = env_int("OPENGURU_SOURCE_MAX_MEMORY_MB", 1024)
# Files of one repository that may be indexed (after filters); a larger one fails before anything is read.
OPENGURU_GITHUB_MAX_FILES = env_int("OPENGURU_GITHUB_MAX_FILES", 10_000)
for _name in ("OPENGURU_SOURCE_MAX_CHARS", "OPENGURU_SOURCE_MAX_CHUNKS", "OPENGURU_SOURCE_MAX_SECONDS",
              "OPENGURU_SOURCE_MAX_MEMORY_MB", "OPENGURU_GITHUB_MAX_FILES"):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be at least 1")
# Summary trees (issue #18), in characters: pieces of a source's text stay under MAX_LENGTH (with OVERLAP
# between them; a tail under MIN_LENGTH joins the piece before), each summary under SUMMARY_LENGTH, so one
# merge reads MAX_LENGTH // SUMMARY_LENGTH summaries. CONCURRENCY bounds one tree's summariser calls at once.
SUMMARIZATION_MAX_LENGTH = env_int("SUMMARIZATION_MAX_LENGTH", 12000)
SUMMARIZATION_OVERLAP_LENGTH = env_int("SUMMARIZATION_OVERLAP_LENGTH", 400)
SUMMARIZATION_MIN_LENGTH = env_int("SUMMARIZATION_MIN_LENGTH", 1500)
SUMMARIZATION_SUMMARY_LENGTH = env_int("SUMMARIZATION_SUMMARY_LENGTH", 1500)
OPENGURU_SUMMARY_CONCURRENCY = env_int("OPENGURU_SUMMARY_CONCURRENCY", 4)
# Summaries are built after every index run unless turned off (no tree, no summary rows, no spend).
OPENGURU_SUMMARIES = env_bool("OPENGURU_SUMMARIES", True)
