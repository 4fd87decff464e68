"""Ingestion limits and fetch policy (issue #4)."""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from backend.config.env import env_bool, env_int, env_list, env_path, env_str

_DATA_DIR = env_path("OPENGURU_DATA_DIR", Path(__file__).resolve().parents[4] / "var")

# Hosts or networks (CIDR) that may be fetched although they are internal, e.g. "wiki.corp,10.0.0.0/8".
OPENGURU_FETCH_ALLOWLIST = env_list("OPENGURU_FETCH_ALLOWLIST", [])
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
# Scheduled re-index: GitHub re-sync and website re-crawl intervals (hours; 0 turns it off).
OPENGURU_GITHUB_RESYNC_HOURS = env_int("OPENGURU_GITHUB_RESYNC_HOURS", 24)
OPENGURU_WEBSITE_RECRAWL_HOURS = env_int("OPENGURU_WEBSITE_RECRAWL_HOURS", 0)
# Local git remotes (file://) are refused by default: a path on the worker is not a user's repository.
OPENGURU_GIT_ALLOW_FILE_URLS = env_bool("OPENGURU_GIT_ALLOW_FILE_URLS", False)
