"""Dashboard channels: API keys shown once and revocable, widget ids with validated origins, integrations page."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import AbstractUser
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from pytest_django.fixtures import Settings as SettingsWrapper
from rest_framework.test import APIClient

from backend.api.models import APIKey
from backend.api.services import api_key_create, api_key_hash
from backend.gurus.models import Guru
from backend.integrations.models import Integration, IntegrationKind
from backend.widget.models import WidgetId
from tests.factories import GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]  # PostgreSQL too: its query plans differ

RAW_KEY = re.compile(r"og_[A-Za-z0-9_-]{40,}")


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    cache.clear()  # API rate-limit counters live in the cache, which outlives a test's transaction
    yield
    cache.clear()


@pytest.fixture
def alice() -> AbstractUser:
    return UserFactory(username="alice")


@pytest.fixture
def bob() -> AbstractUser:
    return UserFactory(username="bob")


@pytest.fixture
def guru(alice: AbstractUser) -> Guru:
    created: Guru = GuruFactory(slug="celery", name="Celery Guru")
    created.maintainers.add(alice)
    return created


@pytest.fixture
def bobs_guru(bob: AbstractUser) -> Guru:
    created: Guru = GuruFactory(slug="bobs", name="Bob's Guru")
    created.maintainers.add(bob)
    return created


def logged_in(user: AbstractUser) -> Client:
    client = Client()
    client.force_login(user)
    return client


def url(name: str, guru: Guru, *args: object) -> str:
    return reverse(f"dashboard:{name}", args=[guru.slug, *args])


def api(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_X_API_KEY=raw)
    return client


def create_key(client: Client, guru: Guru, **fields: object) -> tuple[str, str]:
    """POST the new-key form; returns (the page, the raw key it shows)."""
    form = {"name": "CI bot", "scope": "guru", "rate_limit_per_minute": 100, **fields}
    response = client.post(url("apikey-create", guru), form)
    assert response.status_code == 200
    page = response.content.decode()
    match = RAW_KEY.search(page)
    assert match, "the new key is not on the page"
    return page, match.group(0)


# ---- API keys ---------------------------------------------------------------------------------------------------


def test_a_new_key_is_shown_once_stored_hashed_and_works(alice: AbstractUser, guru: Guru) -> None:
    client = logged_in(alice)
    response = client.post(url("apikey-create", guru), {"name": "CI bot", "scope": "guru",
                                                          "rate_limit_per_minute": 100})
    page = response.content.decode()
    raw = RAW_KEY.search(page).group(0)  # type: ignore[union-attr]
    assert "no-store" in response["Cache-Control"]
    assert "shown only this once" in page
    assert f"curl -s -X POST http://testserver/api/v1/celery/answer/ -H \"X-API-KEY: {raw}\"" in page

    key = APIKey.objects.get()
    assert (key.user, key.guru, key.name, key.rate_limit_per_minute) == (alice, guru, "CI bot", 100)
    assert key.key_hash == api_key_hash(raw) and raw.startswith(key.prefix) and raw not in key.key_hash
    # Never stored anywhere: not in the session either (the page answering the POST is the only copy).
    assert all(raw not in str(s.get_decoded()) for s in Session.objects.all())

    again = client.get(url("channels", guru)).content.decode()
    assert raw not in again and RAW_KEY.search(again) is None
    assert f"<code>{key.prefix}…</code>" in again and "CI bot" in again

    assert api(raw).get("/api/v1/gurus/celery/").status_code == 200
    assert api(raw).get("/api/v1/celery/data-sources/").status_code == 200


def test_get_on_the_create_url_only_redirects(alice: AbstractUser, guru: Guru) -> None:
    response = logged_in(alice).get(url("apikey-create", guru))
    assert response.status_code == 302 and response["Location"] == url("channels", guru)
    assert not APIKey.objects.exists()


def test_revoked_keys_stop_working(alice: AbstractUser, guru: Guru) -> None:
    client = logged_in(alice)
    _, raw = create_key(client, guru)
    key = APIKey.objects.get()
    assert api(raw).get("/api/v1/gurus/celery/").status_code == 200

    response = client.post(url("apikey-revoke", guru, key.pk), follow=True)
    assert response.redirect_chain[-1][0].endswith("/channels/#api-keys")
    page = response.content.decode()
    assert "Revoked “CI bot”" in page and "badge error\">revoked" in page
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert api(raw).get("/api/v1/gurus/celery/").status_code == 401
    # Revoking is POST only.
    assert client.get(url("apikey-revoke", guru, key.pk)).status_code == 405


def test_all_gurus_scope(alice: AbstractUser, guru: Guru) -> None:
    other: Guru = GuruFactory(slug="other")
    other.maintainers.add(alice)
    client = logged_in(alice)
    _, raw = create_key(client, guru, scope="all", name="Everywhere")
    assert APIKey.objects.get().guru is None
    assert api(raw).get("/api/v1/gurus/other/").status_code == 200
    # Listed on every guru the user maintains, marked as such.
    assert "all your gurus" in client.get(url("channels", other)).content.decode()


@pytest.mark.parametrize(("fields", "error"), [
    ({"name": ""}, "This field is required."),
    ({"name": "x" * 101}, "at most 100 characters"),
    ({"rate_limit_per_minute": 0}, "greater than or equal to 1"),
    ({"rate_limit_per_minute": 10_001}, "less than or equal to 10000"),
    ({"rate_limit_per_minute": "lots"}, "Enter a whole number."),
    ({"scope": "everyone"}, "Select a valid choice."),
])
def test_key_form_validation(alice: AbstractUser, guru: Guru, fields: dict[str, object], error: str) -> None:
    form = {"name": "CI bot", "scope": "guru", "rate_limit_per_minute": 60, **fields}
    response = logged_in(alice).post(url("apikey-create", guru), form)
    assert response.status_code == 200 and error in html.unescape(response.content.decode())
    assert not APIKey.objects.exists()


def test_who_may_see_and_revoke_which_key(alice: AbstractUser, bob: AbstractUser, guru: Guru,
                                          bobs_guru: Guru) -> None:
    scoped = api_key_create(user=alice, name="alice-scoped", guru=guru)
    everywhere = api_key_create(user=alice, name="alice-everywhere")
    bobs_key = api_key_create(user=bob, name="bobs", guru=bobs_guru)
    bob_client = logged_in(bob)

    # Bob does not maintain Alice's guru: 404 for every page and action of it.
    for path in [url("channels", guru), url("integrations", guru), url("apikey-create", guru)]:
        assert bob_client.get(path).status_code == 404
    assert bob_client.post(url("apikey-revoke", guru, scoped.api_key.pk)).status_code == 404
    # Nor can he revoke her keys through his own guru's URL, whatever id he posts.
    for key in (scoped, everywhere):
        assert bob_client.post(url("apikey-revoke", bobs_guru, key.api_key.pk)).status_code == 404
    assert "alice-scoped" not in bob_client.get(url("channels", bobs_guru)).content.decode()

    # A co-maintainer sees Alice's key for the guru (not her all-gurus key) but may not revoke it.
    carol = UserFactory(username="carol")
    guru.maintainers.add(carol)
    page = logged_in(carol).get(url("channels", guru)).content.decode()
    assert "alice-scoped" in page and "alice-everywhere" not in page and "Revoke…" not in page
    assert logged_in(carol).post(url("apikey-revoke", guru, scoped.api_key.pk)).status_code == 404

    # A superuser may revoke any key scoped to the guru, but not someone's all-gurus key from here.
    root = UserFactory(username="root", is_superuser=True, is_staff=True)
    assert logged_in(root).post(url("apikey-revoke", guru, everywhere.api_key.pk)).status_code == 404
    assert logged_in(root).post(url("apikey-revoke", guru, scoped.api_key.pk)).status_code == 302

    assert list(APIKey.objects.filter(revoked_at__isnull=False)) == [scoped.api_key]
    assert api(bobs_key.raw).get("/api/v1/gurus/bobs/").status_code == 200


def test_integration_keys_are_listed_but_not_revocable_here(alice: AbstractUser, guru: Guru) -> None:
    issued = api_key_create(user=alice, name="slack bot", guru=guru)
    APIKey.objects.filter(pk=issued.api_key.pk).update(for_integration=True)
    client = logged_in(alice)
    page = client.get(url("channels", guru)).content.decode()
    assert "slack bot" in page and ">integration<" in page and "Revoke…" not in page
    assert client.post(url("apikey-revoke", guru, issued.api_key.pk)).status_code == 404


def test_login_required(guru: Guru) -> None:
    response = Client().get(url("channels", guru))
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert Client().post(url("apikey-create", guru), {"name": "x"}).status_code == 302
    assert not APIKey.objects.exists()


def test_posts_need_a_csrf_token(alice: AbstractUser, guru: Guru) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(url("apikey-create", guru), {"name": "x", "scope": "guru",
                                                     "rate_limit_per_minute": 5}).status_code == 403
    assert not APIKey.objects.exists()


# ---- widget ids -------------------------------------------------------------------------------------------------

WIDGET_FORM = {"name": "Docs site", "rate_limit_per_minute": 100, "per_ip_rate_limit_per_minute": 10,
               "active": "on"}


def test_widget_create_canonicalises_origins_and_shows_the_snippet(alice: AbstractUser, guru: Guru) -> None:
    client = logged_in(alice)
    origins = "HTTPS://Docs.Example.com:443/\n\n  https://*.example.com  \nhttp://localhost:*\nhttps://docs.example.com"
    response = client.post(url("widget-create", guru), {**WIDGET_FORM, "allowed_origins": origins})
    widget = WidgetId.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{url('channels', guru)}?preview={widget.pk}#widget-{widget.pk}"
    assert widget.allowed_origins == ["https://docs.example.com", "https://*.example.com", "http://localhost:*"]
    assert (widget.name, widget.rate_limit_per_minute, widget.per_ip_rate_limit_per_minute, widget.active) == (
        "Docs site", 100, 10, True)

    page = client.get(response["Location"]).content.decode()
    snippet = (f'<script async src="http://testserver/widget.js" id="guru-widget-id" '
               f'data-widget-id="{widget.key}"></script>')
    assert snippet == (f'<script async src="http://testserver/widget.js" id="guru-widget-id" '
                       f'data-widget-id="{widget.key}"></script>')  # as the README documents
    assert html.escape(snippet) in page
    # The live preview embeds this very widget from this server.
    assert f'data-widget-key="{widget.key}"' in page
    assert 'data-script-src="http://testserver/widget.js"' in page


def test_widget_origin_errors_name_every_bad_line(alice: AbstractUser, guru: Guru) -> None:
    origins = "https://ok.example.com\ndocs.example.com\nhttps://*.com\nftp://files.example.com\nnull\n" \
              "https://docs.example.com/path"
    response = logged_in(alice).post(url("widget-create", guru), {**WIDGET_FORM, "allowed_origins": origins})
    page = html.unescape(response.content.decode())
    assert response.status_code == 200
    assert "Line 2: 'docs.example.com' needs a scheme" in page
    assert "Line 3: 'https://*.com': the wildcard needs a registered domain" in page
    assert "Line 4: 'ftp://files.example.com' must start with http:// or https://" in page
    assert 'Line 5: "null" origins' in page
    assert "Line 6: 'https://docs.example.com/path' is not an origin" in page
    assert "Line 1" not in page
    assert not WidgetId.objects.exists()


@pytest.mark.parametrize(("fields", "error"), [
    ({"allowed_origins": "\n".join(f"https://s{i}.example.com" for i in range(51))}, "At most 50 origins"),
    ({"allowed_origins": "https://" + "a" * 300 + ".com"}, "longer than 300 characters"),
    ({"rate_limit_per_minute": 0}, "greater than or equal to 1"),
    ({"per_ip_rate_limit_per_minute": 1001}, "less than or equal to 1000"),
])
def test_widget_form_bounds(alice: AbstractUser, guru: Guru, fields: dict[str, object], error: str) -> None:
    response = logged_in(alice).post(url("widget-create", guru), {**WIDGET_FORM, "allowed_origins": "", **fields})
    assert response.status_code == 200 and error in html.unescape(response.content.decode())
    assert not WidgetId.objects.exists()


def test_widget_edit_and_delete(alice: AbstractUser, guru: Guru) -> None:
    widget = WidgetId.objects.create(guru=guru, name="Old", allowed_origins=["https://old.example.com"])
    key = widget.key
    client = logged_in(alice)
    form = client.get(url("widget-edit", guru, widget.pk)).content.decode()
    assert "https://old.example.com</textarea>" in form and html.escape(f'data-widget-id="{key}"') in form

    bad = client.post(url("widget-edit", guru, widget.pk), {**WIDGET_FORM, "allowed_origins": "old.example.com"})
    assert bad.status_code == 200 and "needs a scheme" in html.unescape(bad.content.decode())
    saved = client.post(url("widget-edit", guru, widget.pk), {
        "name": "New", "allowed_origins": "https://new.example.com", "rate_limit_per_minute": 5,
        "per_ip_rate_limit_per_minute": 2})  # an unticked checkbox is absent: inactive
    assert saved.status_code == 302
    widget.refresh_from_db()
    assert (widget.name, widget.allowed_origins, widget.rate_limit_per_minute, widget.per_ip_rate_limit_per_minute,
            widget.active, widget.key) == ("New", ["https://new.example.com"], 5, 2, False, key)
    page = client.get(url("channels", guru)).content.decode()
    assert "badge error\">inactive" in page and 'data-widget-key' not in page  # no preview of an inactive widget

    assert client.get(url("widget-delete", guru, widget.pk)).status_code == 405
    deleted = client.post(url("widget-delete", guru, widget.pk))
    assert deleted.status_code == 302 and not WidgetId.objects.exists()


def test_another_maintainer_cannot_touch_the_widgets(alice: AbstractUser, bob: AbstractUser, guru: Guru,
                                                     bobs_guru: Guru) -> None:
    widget = WidgetId.objects.create(guru=guru, name="Alice's", allowed_origins=["https://a.example.com"])
    bob_client = logged_in(bob)
    form = {**WIDGET_FORM, "allowed_origins": "https://evil.example.com"}
    for target in (guru, bobs_guru):  # her guru's URLs, and his own guru's URLs with her widget's id
        assert bob_client.get(url("widget-edit", target, widget.pk)).status_code == 404
        assert bob_client.post(url("widget-edit", target, widget.pk), form).status_code == 404
        assert bob_client.post(url("widget-delete", target, widget.pk)).status_code == 404
    assert bob_client.post(url("widget-create", guru), form).status_code == 404
    widget.refresh_from_db()
    assert widget.allowed_origins == ["https://a.example.com"] and WidgetId.objects.count() == 1
    assert widget.key not in bob_client.get(url("channels", bobs_guru)).content.decode()


def test_preview_picks_the_requested_widget(alice: AbstractUser, guru: Guru) -> None:
    first = WidgetId.objects.create(guru=guru, name="First")
    second = WidgetId.objects.create(guru=guru, name="Second")
    client = logged_in(alice)
    assert f'data-widget-key="{second.key}"' in client.get(url("channels", guru)).content.decode()  # newest
    chosen = client.get(url("channels", guru) + f"?preview={first.pk}").content.decode()
    assert f'data-widget-key="{first.key}"' in chosen and f'data-widget-key="{second.key}"' not in chosen
    other = WidgetId.objects.create(guru=GuruFactory(), name="Elsewhere")
    foreign = client.get(url("channels", guru) + f"?preview={other.pk}").content.decode()
    assert other.key not in foreign


def test_channels_page_queries_are_bounded(alice: AbstractUser, guru: Guru,
                                           django_assert_max_num_queries: object) -> None:
    for number in range(30):
        api_key_create(user=UserFactory(username=f"maintainer{number}"), name=f"key {number}", guru=guru)
        api_key_create(user=alice, name=f"global {number}")
        WidgetId.objects.create(guru=guru, name=f"widget {number}", allowed_origins=["https://a.example.com"])
    client = logged_in(alice)
    with django_assert_max_num_queries(8):  # type: ignore[operator]
        page = client.get(url("channels", guru)).content.decode()
    assert page.count('<tr id="key-') == 60 and page.count('class="widget-card"') == 30


# ---- integrations -----------------------------------------------------------------------------------------------


def test_integrations_page_says_what_is_true_for_this_install(alice: AbstractUser, guru: Guru,
                                                              settings: SettingsWrapper) -> None:
    client = logged_in(alice)
    page = client.get(url("integrations", guru)).content.decode()
    # Slack and Discord have their setup cards (tests/dashboard/test_slack_setup.py, test_discord_setup.py).
    assert page.count('<span class="badge">not connected</span>') == 2
    assert "no Discord bot" not in page and "no Slack bot" not in page
    assert f'href="/dashboard/g/{guru.slug}/channels/#widgets"' in page and 'href="/api/docs/"' in page
    for promise in ["Coming soon", "their own issues", "will need", "arrives with", "will be stored"]:
        assert promise not in page, promise

    settings.OPENGURU_DISCORD_API_URL = "http://127.0.0.1:9/api/v10"  # nothing listens: the saved state is shown
    Integration.objects.create(kind=IntegrationKind.DISCORD, guru=guru, external_id="2234", app_id="2234",
                               workspace_name="Acme & Co", access_token="discord-secret")
    page = client.get(url("integrations", guru)).content.decode()
    assert page.count('<span class="badge">not connected</span>') == 1
    assert '<span class="badge ok">connected</span>' in page
    assert "Acme &amp; Co" in page and "Discord could not be reached" in page
    assert "discord-secret" not in page
