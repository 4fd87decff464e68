"""The repository's nginx/nginx.conf for a loopback run: only paths, addresses and Docker-only lines replaced."""

from __future__ import annotations

import os
import pwd
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from backend.core.sidecars import SidecarUnavailable

REPO = Path(__file__).resolve().parents[2]
NGINX_CONF = REPO / "nginx" / "nginx.conf"
# Debian installs nginx in /usr/sbin, which is not on a non-root user's PATH.
NGINX_DIRS = ("/usr/sbin", "/usr/local/sbin", "/usr/local/nginx/sbin")
TEMP_KINDS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")


class ConfigDrift(AssertionError):
    """nginx.conf no longer holds a line the loopback rendering must replace: update both together."""


@dataclass(frozen=True)
class NginxSite:
    """Where the rendered nginx listens, whom it proxies to, and where it keeps its files."""

    listen: str  # 127.0.0.1:<port>; compose: port 80 of the container
    upstream: str  # the web process, 127.0.0.1:<port>; compose: web:8000
    bind: str  # source address of nginx's connections to web, so the app can trust nginx alone
    static_parent: Path  # the directory holding static/; compose: /srv/openguru (the app_static volume)
    prefix: Path  # rendered config, logs, pid and temp directories

    @property
    def error_log(self) -> Path:
        return self.prefix / "error.log"

    @property
    def access_log(self) -> Path:
        return self.prefix / "access.log"


def nginx_binary() -> str:
    """nginx on PATH, else in the sbin directories packages install it to."""
    found = shutil.which("nginx") or shutil.which("nginx", path=os.pathsep.join(NGINX_DIRS))
    if found is None:
        raise SidecarUnavailable("nginx is not installed (looked on PATH and in /usr/sbin); apt-get install nginx")
    return found


def mime_types(binary: str) -> Path:
    """mime.types beside the config path nginx was built with (/etc/nginx on Debian and in the official image)."""
    built = subprocess.run([binary, "-V"], capture_output=True, text=True, check=True, timeout=10).stderr
    match = re.search(r"--conf-path=(\S+)", built)
    path = (Path(match.group(1)).parent if match else Path("/etc/nginx")) / "mime.types"
    if not path.exists():
        raise SidecarUnavailable(f"{binary} has no {path}; reinstall the nginx package")
    return path


def _user_line() -> str:
    # Debian has no `nginx` user. Not root: nginx cannot switch users anyway. Root: workers run as the
    # caller, who owns the static files and temp directories of this run.
    return f"user  {pwd.getpwuid(os.geteuid()).pw_name};" if os.geteuid() == 0 else ""


def substitutions(site: NginxSite, mime: Path) -> list[tuple[str, str]]:
    """(text in nginx.conf, its loopback replacement); each text must occur exactly once."""
    temps = "".join(f"\n    {kind}_temp_path  {site.prefix / 'temp' / kind};" for kind in TEMP_KINDS)
    return [
        ("user  nginx;", _user_line()),
        ("error_log  /var/log/nginx/error.log  notice;", f"error_log  {site.error_log}  notice;"),
        ("pid        /var/run/nginx.pid;", f"pid  {site.prefix / 'nginx.pid'};"),
        ("include       /etc/nginx/mime.types;", f"include  {mime};"),
        ("access_log  /var/log/nginx/access.log  main;", f"access_log  {site.access_log}  main;"),
        # Uploads are buffered here; the built-in default (/var/lib/nginx) belongs to the system's nginx.
        ("client_body_buffer_size  1m;", "client_body_buffer_size  1m;" + temps),
        # Docker's embedded DNS, and `resolve` (nginx >= 1.27.3) to follow a recreated web container.
        ("resolver  127.0.0.11  valid=10s  ipv6=off;", ""),
        ("server  web:8000  resolve;", f"server  {site.upstream};"),
        ("listen       80 default_server;", f"listen  {site.listen}  default_server;"),
        # On loopback every process is 127.0.0.1; compose gives nginx its own address on the edge network.
        ("proxy_connect_timeout  10s;", f"proxy_bind  {site.bind};\n        proxy_connect_timeout  10s;"),
        ("root         /srv/openguru;", f"root  {site.static_parent};"),
    ]


def render(site: NginxSite, mime: Path, conf: str | None = None) -> str:
    """nginx.conf with every substitution applied; ConfigDrift if one no longer matches exactly once."""
    text = NGINX_CONF.read_text() if conf is None else conf
    for old, new in substitutions(site, mime):
        found = text.count(old)
        if found != 1:
            raise ConfigDrift(f"nginx/nginx.conf holds {old!r} {found} times, not once: update "
                              "tests/support/topology_nginx.py together with it")
        text = text.replace(old, new)
    return text


def nginx_argv(binary: str, site: NginxSite) -> list[str]:
    """The foreground command; -e keeps even start-up errors out of the system's log directory."""
    return [binary, "-p", str(site.prefix), "-e", str(site.error_log), "-c", str(site.prefix / "nginx.conf"),
            "-g", "daemon off;"]


def write_config(site: NginxSite, binary: str) -> Path:
    """The rendered config and its directories, checked with `nginx -t`."""
    for kind in TEMP_KINDS:
        (site.prefix / "temp" / kind).mkdir(parents=True, exist_ok=True)
    conf = site.prefix / "nginx.conf"
    conf.write_text(render(site, mime_types(binary)))
    check = subprocess.run([*nginx_argv(binary, site)[:-2], "-t"], capture_output=True, text=True, timeout=30)
    if check.returncode != 0:
        raise AssertionError(f"nginx -t rejected the rendered {conf}:\n{check.stderr}")
    return conf
