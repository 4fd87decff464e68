"""Login protects every page that shows or changes data; health answers without login."""

from __future__ import annotations

import os

import pytest
from django.core.management import call_command
from django.test import Client

from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]


def test_anonymous_visitors_are_sent_to_login(client: Client) -> None:
    for url in ["/", "/admin/", "/admin/gurus/guru/add/"]:
        response = client.get(url)
        assert response.status_code == 302 and "login" in response["Location"], url


def test_anonymous_post_to_admin_changes_nothing(client: Client) -> None:
    response = client.post("/admin/gurus/guru/add/", {"slug": "x", "name": "X", "domain_knowledge": "y"})
    assert response.status_code == 302
    assert Guru.objects.count() == 0


def test_login_then_dashboard_lists_only_own_gurus(client: Client) -> None:
    maintainer = UserFactory(username="ana")
    mine = GuruFactory(name="Mine")
    mine.maintainers.add(maintainer)
    GuruFactory(name="Someone else's")
    response = client.post("/accounts/login/", {"username": "ana", "password": "correct horse battery staple"})
    assert response.status_code == 302
    page = client.get("/").content.decode()
    assert "Mine" in page and "Someone else" not in page


def test_health_reports_database_and_vector_store(client: Client) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "vector_store": "ok"}


def test_ensure_admin_creates_the_first_admin_once(capsys: pytest.CaptureFixture[str], client: Client) -> None:
    call_command("ensure_admin")
    first = capsys.readouterr().out
    password = first.split("password: ")[1].split()[0]
    call_command("ensure_admin")
    assert "already exists" in capsys.readouterr().out
    assert client.login(username="admin", password=password)
    assert client.get("/admin/").status_code == 200


@pytest.mark.skipif(not os.environ.get("DATABASE_URL"), reason="production profile only")
def test_production_profile_really_uses_postgresql_redis_and_a_milvus_server() -> None:
    from django.conf import settings
    from django.db import connection

    assert connection.vendor == "postgresql"
    assert settings.CACHES["default"]["BACKEND"].endswith("RedisCache")
    assert settings.CELERY_BROKER_URL.startswith("redis://")
    assert os.environ["MILVUS_URI"].startswith("http://127.0.0.1:")


def test_staff_maintainer_creating_a_guru_in_admin_becomes_its_maintainer(client: Client) -> None:
    from django.contrib.auth.models import Permission

    staff = UserFactory(username="staff", is_staff=True)
    staff.user_permissions.add(*Permission.objects.filter(codename__in=["add_guru", "view_guru", "change_guru"]))
    client.force_login(staff)
    response = client.post("/admin/gurus/guru/add/", {
        "slug": "mine", "name": "Mine", "domain_knowledge": "x", "base_color": "#000000", "language": "en",
        "active": "on",
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    assert list(Guru.objects.get(slug="mine").maintainers.all()) == [staff]
    assert client.get("/admin/gurus/guru/").content.decode().count("/change/") >= 1
