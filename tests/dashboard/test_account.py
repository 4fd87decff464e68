"""Accounts: logging in with failed-attempt throttling, and a maintainer changing their own password."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from pytest_django.fixtures import Settings as SettingsWrapper

from tests.factories import UserFactory

pytestmark = [pytest.mark.django_db]

PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    cache.clear()  # failure counters outlive tests


@pytest.fixture
def bo() -> Any:
    return UserFactory(username="bo")


def _log_in(client: Client, username: str, password: str, ip: str = "203.0.113.7") -> Any:
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=ip)


def test_login_works_and_a_wrong_password_says_so(client: Client, bo: Any) -> None:
    wrong = _log_in(client, "bo", "nope")
    assert wrong.status_code == 200 and "Please try again" in wrong.content.decode()
    right = _log_in(client, "bo", PASSWORD)
    assert right.status_code == 302 and right["Location"] == "/"


def test_too_many_failures_block_the_username_even_with_the_right_password(
    client: Client, bo: Any, settings: SettingsWrapper,
) -> None:
    settings.OPENGURU_LOGIN_FAILURE_LIMIT = 3
    for attempt in range(3):
        assert _log_in(client, "bo", f"guess {attempt}", ip=f"198.51.100.{attempt}").status_code == 200
    blocked = _log_in(client, "BO ", PASSWORD, ip="198.51.100.99")  # another address, same account
    assert blocked.status_code == 429 and int(blocked["Retry-After"]) > 0
    assert "Too many failed log-ins" in blocked.content.decode()
    assert "_auth_user_id" not in client.session
    # Another account from a fresh address is not affected.
    UserFactory(username="cy")
    assert _log_in(client, "cy", PASSWORD, ip="192.0.2.1").status_code == 302


def test_too_many_failures_from_one_address_block_it_for_every_username(
    client: Client, bo: Any, settings: SettingsWrapper,
) -> None:
    settings.OPENGURU_LOGIN_FAILURE_LIMIT = 3
    for name in ("root", "admin", "test"):
        _log_in(client, name, "x")
    assert _log_in(client, "bo", PASSWORD).status_code == 429
    assert _log_in(client, "bo", PASSWORD, ip="192.0.2.50").status_code == 302


def test_the_limit_can_be_switched_off(client: Client, bo: Any, settings: SettingsWrapper) -> None:
    settings.OPENGURU_LOGIN_FAILURE_LIMIT = 0
    for _ in range(5):
        _log_in(client, "bo", "x")
    assert _log_in(client, "bo", PASSWORD).status_code == 302


def test_a_maintainer_changes_their_password_and_stays_logged_in(client: Client, bo: Any) -> None:
    client.force_login(bo)
    home = client.get("/").content.decode()
    assert 'href="/accounts/password/"' in home
    bad = client.post("/accounts/password/", {"old_password": "wrong", "new_password1": "a brand new secret 42",
                                              "new_password2": "a brand new secret 42"})
    assert bad.status_code == 200 and "old password was entered incorrectly" in bad.content.decode()
    weak = client.post("/accounts/password/", {"old_password": PASSWORD, "new_password1": "123",
                                               "new_password2": "123"})
    assert weak.status_code == 200 and "too short" in weak.content.decode()
    done = client.post("/accounts/password/", {"old_password": PASSWORD, "new_password1": "a brand new secret 42",
                                               "new_password2": "a brand new secret 42"}, follow=True)
    assert done.redirect_chain[-1][0] == "/" and "Your password was changed." in done.content.decode()
    assert client.get("/").status_code == 200  # the session survived the change
    bo.refresh_from_db()
    assert bo.check_password("a brand new secret 42")


def test_the_password_page_needs_a_login(client: Client) -> None:
    response = client.get("/accounts/password/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_admin_log_in_form_is_the_throttled_one(client: Client, bo: Any, settings: SettingsWrapper) -> None:
    settings.OPENGURU_LOGIN_FAILURE_LIMIT = 1
    _log_in(client, "bo", "x")
    sent = client.post("/admin/login/?next=/admin/", {"username": "bo", "password": PASSWORD})
    assert sent.status_code == 302 and sent["Location"] == "/accounts/login/?next=/admin/"
    assert "_auth_user_id" not in client.session
    assert client.get("/admin/").status_code == 302  # not logged in by the admin's form
