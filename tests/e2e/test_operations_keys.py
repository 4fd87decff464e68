"""Rotating keys on real processes: sessions survive a new secret key with the old one as fallback, and stored
secrets stay readable through a rotation and after `rotate_keys` once the fallback is gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.product import PROFILE_VARIABLES, REPO, Browser, launch, stop

pytestmark = pytest.mark.slow

KEY_VARIABLES = {"DJANGO_SECRET_KEY", "DJANGO_SECRET_KEY_FALLBACKS", "OPENGURU_ENCRYPTION_KEY",
                 "OPENGURU_ENCRYPTION_KEY_FALLBACKS"}
NEW = "the-new-secret-key-" + "n" * 40
TOKEN = "xoxb-rotate-me"
STORE = ("from backend.gurus.models import Guru; from backend.integrations.models import Integration; "
         "guru = Guru.objects.create(slug='keys', name='Keys', domain_knowledge='keys'); "
         f"Integration.objects.create(kind='SLACK', guru=guru, external_id='T1', access_token='{TOKEN}')")
READ = "from backend.integrations.models import Integration; print('token=' + Integration.objects.get().access_token)"


def _manage(data_dir: Path, keys: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """manage.py with exactly these keys, beside `start` if it runs (its Milvus sidecar from run.env)."""
    env = {k: v for k, v in os.environ.items() if k not in PROFILE_VARIABLES | KEY_VARIABLES}
    env.update(OPENGURU_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="backend.config.settings.base", **keys)
    run_env = data_dir / "run.env"
    if run_env.exists():
        env.update(line.split("=", 1) for line in run_env.read_text().split())
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def _token(data_dir: Path, keys: dict[str, str]) -> str:
    done = _manage(data_dir, keys, "shell", "-c", READ)
    return done.stdout.strip().splitlines()[-1] if done.returncode == 0 else done.stderr


def _logged_in(browser: Browser) -> bool:
    return 'name="password"' not in browser.get("/")  # the dashboard, or the log-in form


def test_a_secret_key_rotation_keeps_sessions_and_stored_secrets(tmp_path: Path) -> None:
    """The embedded default's recipe (docs/operations.md): a new key in the data dir, the old one as fallback."""
    data = tmp_path / "data"
    product = launch(data)
    visits, stays_away = Browser(product.url), Browser(product.url)
    try:
        for browser in (visits, stays_away):
            browser.submit("/accounts/login/", {"username": product.username, "password": product.password})
            assert _logged_in(browser)
        assert _manage(data, {}, "shell", "-c", STORE).returncode == 0
    finally:
        stop(product)
    old = (data / "secret_key").read_text().strip()
    (data / "secret_key").write_text(NEW)
    # Without the fallback the token is unreadable (the encryption key derives from the secret key here).
    assert "OPENGURU_ENCRYPTION_KEY_FALLBACKS" in _token(data, {})

    fallback = {"DJANGO_SECRET_KEY_FALLBACKS": old}
    product = launch(data, env=fallback)
    visits.base = stays_away.base = product.url  # a new port; cookies do not depend on it
    try:
        assert _logged_in(visits)  # the session signed with the old key is accepted, and re-signed
        assert _token(data, fallback) == f"token={TOKEN}"
        done = _manage(data, fallback, "rotate_keys")
        assert "integrations.Integration.access_token: re-encrypted 1, already current 0" in done.stdout, done
    finally:
        stop(product)

    product = launch(data)
    visits.base = stays_away.base = product.url
    try:
        assert _token(data, {}) == f"token={TOKEN}"  # rotated: no fallback needed
        assert _logged_in(visits)
        assert not _logged_in(stays_away)  # its session only ever had the old key's signature
    finally:
        stop(product)


def test_a_dedicated_encryption_key_is_rotated_with_its_fallbacks(tmp_path: Path) -> None:
    data = tmp_path / "data"
    secret = {"DJANGO_SECRET_KEY": NEW}
    assert _manage(data, secret, "migrate", "--noinput").returncode == 0
    assert _manage(data, secret, "shell", "-c", STORE).returncode == 0

    first = {**secret, "OPENGURU_ENCRYPTION_KEY": "encryption-key-one"}
    assert _token(data, first) == f"token={TOKEN}"  # saved under the secret key, which stays a fallback
    assert "re-encrypted 1" in _manage(data, first, "rotate_keys").stdout

    second = {**secret, "OPENGURU_ENCRYPTION_KEY": "encryption-key-two"}
    assert "cannot be decrypted" in _token(data, second)
    both = {**second, "OPENGURU_ENCRYPTION_KEY_FALLBACKS": "encryption-key-one"}
    assert _token(data, both) == f"token={TOKEN}"
    assert "would re-encrypt 1" in _manage(data, both, "rotate_keys", "--dry-run").stdout
    assert "re-encrypted 1" in _manage(data, both, "rotate_keys").stdout

    assert _token(data, second) == f"token={TOKEN}"
    assert "re-encrypted 0, already current 1" in _manage(data, second, "rotate_keys").stdout
    wrong = _manage(data, {**secret, "OPENGURU_ENCRYPTION_KEY": "never-used"}, "rotate_keys")
    assert wrong.returncode == 1 and "No configured key decrypts: integrations.Integration.access_token " \
                                     "(Integration #1)" in wrong.stderr
