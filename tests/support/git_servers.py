"""Local Git servers for tests: `git daemon` (git://) and `git http-backend` behind a small HTTP server (http://).

Both serve bare repositories from one directory, under any path (GitLab's group/sub/project.git, GitHub's
owner/repo, Bitbucket's workspace/repo.git), so nothing in OpenGuru can rely on github.com. Repositories under
`private/` need HTTP Basic credentials; every Authorization header received is recorded.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from pytest_django.fixtures import Settings as SettingsWrapper

from tests.support.gitrepo import GIT_ENV, git, init_repo

PRIVATE_PREFIX = "/private/"
REPO_FILES = {"README.md": "# Relay\n\nThe relay forwards heron messages between brokers.\n",
              "src/relay.py": "def forward(message):\n    \"\"\"Pass a heron message on.\"\"\"\n    return message\n"}
# Paths as the hosted forges spell them: nothing may assume github.com's owner/repo shape.
HOSTED = {"gitlab": "group/sub/project.git", "github": "owner/repo", "bitbucket": "workspace/repo.git",
          "gitea": "org/tool.git"}
PRIVATE = "private/secret.git"


def bare_repository(root: Path, name: str, files: dict[str, str], *, branch: str = "main") -> Path:
    """A bare repository at root/name holding one commit of files (built in a scratch clone beside it)."""
    work = init_repo(root.parent / f"work-{name.replace('/', '-')}", files, branch=branch)
    target = root / name
    target.parent.mkdir(parents=True, exist_ok=True)
    git(root.parent, "clone", "-q", "--bare", str(work), str(target))
    return target


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


@contextmanager
def git_daemon(root: Path) -> Iterator[str]:
    """`git daemon` serving root read-only; yields its base URL, git://127.0.0.1:<port>."""
    port = free_port()
    command = ["git", "daemon", "--reuseaddr", "--listen=127.0.0.1", f"--port={port}", f"--base-path={root}",
               "--export-all", "--informative-errors", str(root)]
    process = subprocess.Popen(command, env=GIT_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_port(port)
        yield f"git://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=10)


@dataclass
class GitHttpServer:
    """`git http-backend` as CGI behind a threaded HTTP server on loopback."""

    root: Path
    password: str = "s3cret-token-value"
    authorizations: list[str] = field(default_factory=list)
    base_url: str = ""
    ca_file: str = ""
    """With tls: the self-signed certificate's PEM, for OPENGURU_GIT_CA_BUNDLE."""

    def credentials_ok(self, header: str) -> bool:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "basic":
            return False
        try:
            _user, _, secret = base64.b64decode(value).decode().partition(":")
        except ValueError:
            return False
        return secret == self.password


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        body = b""
        while size := int(handler.rfile.readline().strip() or b"0", 16):
            body += handler.rfile.read(size)
            handler.rfile.readline()
        handler.rfile.readline()
        return body
    return handler.rfile.read(int(handler.headers.get("Content-Length") or 0))


def _handler(server: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's signature
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            path, _, query = self.path.partition("?")
            auth = self.headers.get("Authorization", "")
            if auth:
                server.authorizations.append(auth)
            if path.startswith(PRIVATE_PREFIX) and not server.credentials_ok(auth):
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.end_headers()
                return
            env = {**GIT_ENV, "GIT_PROJECT_ROOT": str(server.root), "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path,
                   "QUERY_STRING": query, "REQUEST_METHOD": self.command, "REMOTE_ADDR": "127.0.0.1",
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                   "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
                   "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", "")}
            body = _read_body(self) if self.command == "POST" else b""
            env["CONTENT_LENGTH"] = str(len(body))
            result = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, check=False)
            head, _, payload = result.stdout.partition(b"\r\n\r\n")
            headers = [line.split(":", 1) for line in head.decode("latin-1").split("\r\n") if ":" in line]
            status = next((int(v.split()[0]) for k, v in headers if k.lower() == "status"), 200)
            self.send_response(status)
            for key, value in headers:
                if key.lower() not in ("status", "content-length"):
                    self.send_header(key, value.strip())
            # A length, so the client never depends on how the connection ends (TLS wants a close_notify).
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 valid for a day, and its key (PEM files in directory)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


@contextmanager
def git_http_server(root: Path, *, tls: bool = False) -> Iterator[GitHttpServer]:
    """Serve root's bare repositories over smart HTTP at http(s)://127.0.0.1:<port>/<path>."""
    state = GitHttpServer(root=root)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    scheme = "http"
    if tls:
        cert_file, key_file = self_signed_certificate(root.parent / f"tls-{httpd.server_address[1]}")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_file, key_file)
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        state.ca_file, scheme = str(cert_file), "https"
    state.base_url = f"{scheme}://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)





@dataclass
class GitHosting:
    """Bare repositories (HOSTED paths, PRIVATE, an empty.git) served by http-backend over http and https, and
    by git daemon; read-only, shared by the whole session."""

    root: Path
    http: GitHttpServer
    https: GitHttpServer
    daemon: str


@pytest.fixture(scope="session")
def git_hosting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitHosting]:
    root = tmp_path_factory.mktemp("git-hosting") / "srv"
    for path in [*HOSTED.values(), PRIVATE]:
        bare_repository(root, path, REPO_FILES, branch="trunk")
    git(root.parent, "init", "-q", "--bare", str(root / "empty.git"))
    with git_http_server(root) as http, git_http_server(root, tls=True) as https, git_daemon(root) as daemon:
        yield GitHosting(root=root, http=http, https=https, daemon=daemon)


@pytest.fixture
def git_hosts(git_hosting: GitHosting, settings: SettingsWrapper) -> Iterator[GitHosting]:
    """The servers, reachable: loopback allow-listed, local repositories enabled, the https certificate trusted."""
    settings.OPENGURU_FETCH_ALLOWLIST = ["127.0.0.1"]
    settings.OPENGURU_GIT_ALLOW_FILE_URLS = True
    settings.OPENGURU_GIT_CA_BUNDLE = git_hosting.https.ca_file
    git_hosting.https.authorizations.clear()
    yield git_hosting
