"""Which Git remotes may be fetched and how: the URL policy per transport, pinned addresses, the token's header,
and git's complaints turned into sentences a maintainer can act on (never containing the token)."""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from backend.adapters.github.links import Forge, forge_of
from backend.adapters.net_guard import (
    DEFAULT_PORTS,
    RESTART_NOTE,
    AddressBlockedError,
    BlockedUrlError,
    Resolver,
    UrlPolicy,
    check_url,
    system_resolver,
)
from backend.pipeline.errors import PermanentServiceError, ServiceError, TransientServiceError

Config = list[tuple[str, str]]
# Sent in clear text (and git:// cannot authenticate at all): only to hosts an administrator named.
PLAIN_SCHEMES = ("http", "git")
SCHEMES_REFUSED = ("Only https:// repository URLs can be fetched (http:// and git:// from hosts in "
                   "OPENGURU_FETCH_ALLOWLIST, local paths when OPENGURU_GIT_ALLOW_FILE_URLS is on), not {given}.")
FILE_REFUSED = ("Local repositories (paths and file:// URLs) are refused on this server: "
                "OPENGURU_GIT_ALLOW_FILE_URLS is off.")
NOT_FOUND = ("repository not found: the repository does not exist or is private (check the URL; a private "
             "repository needs an access token)")
AUTH_REQUIRED = ("authentication required: the repository does not exist or is private; add an access token "
                 "that can read it")
TOKEN_REFUSED = ("authentication failed: the access token was refused; check that it is valid and can read this "
                 "repository")
UNREACHABLE = "host unreachable"
_USERNAMES = {Forge.BITBUCKET: "x-token-auth", Forge.GITLAB: "oauth2"}
_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Remote branch .* not found|couldn't find remote ref", re.I), "branch"),
    (re.compile(r"returned error: 3\d\d", re.I), "the repository URL redirects elsewhere; use its new URL"),
    (re.compile(r"could not read (Username|Password)|Authentication failed|returned error: 40[13]|terminal "
                r"prompts disabled|HTTP Basic: Access denied", re.I), "auth"),
    (re.compile(r"transport '\w+' not allowed|Unable to find remote helper|protocol .* is not supported", re.I),
     "this kind of repository URL is not allowed"),
    (re.compile(r"not found|does not appear to be a git repository|returned error: 404|repository not exported|"
                r"no such repository|No such file or directory", re.I), NOT_FOUND),
)
_UNREACHABLE = re.compile(r"Could not resolve host|Failed to connect|Connection refused|timed out|unable to connect|"
                          r"Network is unreachable|No route to host|Name or service not known|unable to look up",
                          re.I)


def basic_auth(url: str, token: str) -> str:
    """The Basic credentials for a token: "user:secret" as given, else the user name the URL's forge expects."""
    user, sep, secret = token.partition(":")
    if not sep:
        user, secret = _USERNAMES.get(forge_of(urlsplit(url).hostname or ""), "x-access-token"), token
    return base64.b64encode(f"{user}:{secret}".encode()).decode()


@dataclass(frozen=True)
class RemotePolicy:
    """https to public (or allow-listed) hosts; http and git:// to allow-listed ones; file:// when enabled."""

    allow: tuple[str, ...] = ()
    allow_file_urls: bool = False
    resolver: Resolver = system_resolver
    ca_bundle: str = ""
    """Certificates to trust for https remotes (a self-hosted server with an internal CA); "" for the system's."""

    def config(self, url: str, token: str) -> Config:
        """Check the remote; per-call git config that pins the transport, the checked addresses and the auth."""
        try:
            parts = urlsplit(url)
            scheme, port = parts.scheme.lower(), parts.port
        except ValueError as exc:
            raise PermanentServiceError(f"{url!r} is not a valid repository URL.") from exc
        config = [("protocol.allow", "never"), ("http.followRedirects", "false")]
        if scheme == "file":
            if not self.allow_file_urls:
                raise BlockedUrlError(FILE_REFUSED)
            return [*config, ("protocol.file.allow", "always")]
        if scheme not in ("https", *PLAIN_SCHEMES):
            raise BlockedUrlError(SCHEMES_REFUSED.format(given=f"{scheme}://" if scheme else "this address"))
        if token and scheme != "https":
            raise BlockedUrlError("An access token is only sent over https://; give the repository's https URL.")
        host, resolved = self._check(url, scheme)
        port = port or DEFAULT_PORTS[scheme]
        config.append((f"protocol.{scheme}.allow", "always"))
        if resolved:
            # Pin the addresses just checked so a second DNS answer (rebinding) cannot point git elsewhere.
            ordered = sorted(resolved, key=lambda a: (":" in a, a))
            config.append(_pin(scheme, parts.netloc, host, port, ordered))
        if self.ca_bundle and scheme == "https":
            config.append(("http.sslCAInfo", self.ca_bundle))
        if token:
            config.append(("http.extraHeader", f"Authorization: Basic {basic_auth(url, token)}"))
        return config

    def _check(self, url: str, scheme: str) -> tuple[str, list[str]]:
        resolved: list[str] = []

        def capture(host: str, port: int) -> list[str]:
            resolved.extend(self.resolver(host, port))
            return resolved

        policy = UrlPolicy(allow=self.allow, schemes=(scheme,), public=scheme == "https")
        try:
            return check_url(url, policy, resolver=capture), resolved
        except BlockedUrlError as exc:
            if not isinstance(exc, AddressBlockedError) or scheme == "https":
                raise
            host = urlsplit(url).hostname or ""
            raise AddressBlockedError(
                f"{scheme}:// remotes travel unencrypted, so they are fetched only from hosts that "
                f"OPENGURU_FETCH_ALLOWLIST names, and {host} is not one of them; use the https:// URL or add the "
                f"host (e.g. {host}:{urlsplit(url).port or DEFAULT_PORTS[scheme]}). {RESTART_NOTE}") from exc
        except ServiceError as exc:  # the name does not resolve (or the resolver failed): same kind, in words
            raise type(exc)(f"{UNREACHABLE}: {exc}") from exc


def _pin(scheme: str, netloc: str, host: str, port: int, addresses: list[str]) -> tuple[str, str]:
    if scheme != "git":
        joined = ",".join(f"[{a}]" if ":" in a else a for a in addresses)
        return "http.curloptResolve", f"{host}:{port}:{joined}"
    # git:// does not go through curl: rewrite the URL to the checked address instead (origin keeps the name).
    address = f"[{addresses[0]}]" if ":" in addresses[0] else addresses[0]
    return f"url.git://{address}:{port}/.insteadOf", f"git://{netloc}/"


def git_error(command: str, stderr: str, token: str, branch: str, url: str = "") -> ServiceError:
    """Map git's complaint to a Permanent or Transient error whose message never contains the token."""
    detail = redact(stderr.strip(), token, url)[-600:]
    for pattern, message in _PATTERNS:
        if pattern.search(stderr):
            if message == "branch":
                message = f"the branch {branch!r} does not exist in the repository"
            elif message == "auth":
                message = TOKEN_REFUSED if token else AUTH_REQUIRED
            return PermanentServiceError(f"git {command} failed: {message}. ({detail})")
    if _UNREACHABLE.search(stderr):
        return TransientServiceError(f"git {command} failed: {UNREACHABLE}. ({detail})")
    return TransientServiceError(f"git {command} failed: {detail or 'no error output'}")


def redact(text: str, token: str, url: str = "") -> str:
    """The text with the token, its secret part and its Basic encoding replaced by ***."""
    if not token:
        return text
    secrets = {token, token.partition(":")[2], basic_auth(url, token), basic_auth("", token)} - {""}
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return text
