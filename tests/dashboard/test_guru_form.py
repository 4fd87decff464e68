"""The New guru form: a slug made from the name when none is given, the model's default colour, one icon group."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from backend.gurus.models import SLUG_PATTERN, Guru
from backend.gurus.selectors import guru_slug_from_name
from tests.dashboard.test_gurus import NEW_GURU, PNG_1PX
from tests.factories import GuruFactory

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(("name", "slug"), [
    ("Celery Guru", "celery-guru"),
    ("  Crème brûlée & co_Ops  ", "creme-brulee-co-ops"),
    ("Über--Guru__v2!", "uber-guru-v2"),
    ("日本語", "guru"),
    ("x" * 49 + " tail", "x" * 49),
])
def test_slug_from_name_follows_the_slug_rules(name: str, slug: str) -> None:
    made = guru_slug_from_name(name)
    assert made == slug
    assert len(made) <= 50 and re.fullmatch(SLUG_PATTERN, made)


def test_a_taken_slug_gets_a_number() -> None:
    GuruFactory(slug="celery-guru")
    GuruFactory(slug="celery-guru-2")
    assert guru_slug_from_name("Celery Guru") == "celery-guru-3"
    GuruFactory(slug="a" * 50)
    assert guru_slug_from_name("a" * 60) == "a" * 48 + "-2"


def test_create_without_a_slug_derives_one(client: Client, maintainer: Any) -> None:
    for _ in range(2):
        response = client.post("/dashboard/gurus/new/", {**NEW_GURU, "slug": ""})
        assert response.status_code == 302
    assert sorted(Guru.objects.values_list("slug", flat=True)) == ["celery-guru", "celery-guru-2"]


def test_edit_keeps_the_slug_required(client: Client, maintainer: Any, guru: Guru) -> None:
    response = client.post(f"/dashboard/g/{guru.slug}/", {**NEW_GURU, "slug": ""})
    assert response.status_code == 200 and "This field is required" in response.content.decode()
    guru.refresh_from_db()
    assert guru.slug == "celery"


def test_the_new_form_shows_the_default_colour_and_one_icon_group(client: Client, maintainer: Any) -> None:
    page = client.get("/dashboard/gurus/new/").content.decode()
    default = Guru._meta.get_field("base_color").default
    assert default == "#1f6feb"
    assert f'type="color" name="base_color" value="{default}"' in page
    assert 'data-from-name="id_name"' in page
    group = page.split('<fieldset class="icon-group"', 1)[1].split("</fieldset>", 1)[0]
    assert 'type="file" name="icon_file"' in group and 'name="icon_url"' in group and "<legend>Icon</legend>" in group
    assert page.count('name="icon_url"') == 1 and page.count('name="icon_file"') == 1


def test_an_upload_wins_over_a_url(client: Client, maintainer: Any) -> None:
    form = {**NEW_GURU, "icon_url": "https://cdn.example.com/icon.png",
            "icon_file": SimpleUploadedFile("logo.png", PNG_1PX)}
    assert client.post("/dashboard/gurus/new/", form).status_code == 302
    guru = Guru.objects.get(slug="celery")
    assert guru.icon and guru.icon_url == "https://cdn.example.com/icon.png"
    page = client.get("/g/celery/").content.decode()
    assert f'src="/gurus/{guru.pk}/icon-' in page
    assert "https://cdn.example.com/icon.png" not in page
