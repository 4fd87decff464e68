"""Dashboard gurus pages: list, create, edit, delete with a summary, and who may see what."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import pytest
from django.test import Client

from backend.adapters.vector_store.fake import InMemoryVectorStore
from backend.answering.models import Question
from backend.gurus.models import Guru, VectorCollection
from backend.gurus.services import collection_name_for
from backend.sources.models import SourceStatus
from tests.factories import DataSourceFactory, GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]  # PostgreSQL too: its query plans differ

OnCommit = Callable[..., AbstractContextManager[list[Callable[[], Any]]]]
NEW_GURU = {"name": "Celery Guru", "slug": "celery", "domain_knowledge": "Celery task queues",
            "intro_text": "Ask me about tasks.", "base_color": "#7c3aed", "icon_url": "", "language": "en",
            "active": "on"}


def test_anonymous_visitors_are_redirected_to_login(client: Client) -> None:
    guru = GuruFactory()
    for url in ["/", "/dashboard/gurus/new/", f"/dashboard/g/{guru.slug}/", f"/dashboard/g/{guru.slug}/delete/"]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    assert client.post(f"/dashboard/g/{guru.slug}/delete/", {"confirm_slug": guru.slug}).status_code == 302
    assert Guru.objects.filter(pk=guru.pk).exists()


def test_create_makes_the_user_a_maintainer_and_the_collection(
    client: Client, maintainer: Any, django_capture_on_commit_callbacks: OnCommit
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/dashboard/gurus/new/", NEW_GURU)
    assert response.status_code == 302 and response["Location"] == "/dashboard/g/celery/sources/"
    guru = Guru.objects.get(slug="celery")
    assert list(guru.maintainers.all()) == [maintainer]
    assert guru.base_color == "#7c3aed" and guru.intro_text == "Ask me about tasks."
    assert VectorCollection.objects.get(guru_id=guru.pk).name == collection_name_for("celery")
    assert "Celery Guru" in client.get("/").content.decode()


@pytest.mark.parametrize(("field", "value", "message"), [
    ("slug", "Bad Slug!", "lowercase"),
    ("base_color", "red", "#1f6feb"),
    ("icon_url", "http://example.com/icon.png", "https://"),
    ("name", "", "required"),
])
def test_create_rejects_invalid_fields(client: Client, maintainer: Any, field: str, value: str, message: str) -> None:
    response = client.post("/dashboard/gurus/new/", {**NEW_GURU, field: value})
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Guru.objects.exists()


def test_create_with_a_taken_slug_explains_instead_of_failing(client: Client, maintainer: Any) -> None:
    GuruFactory(slug="celery")
    response = client.post("/dashboard/gurus/new/", NEW_GURU)
    assert response.status_code == 200
    assert "already exists" in response.content.decode()


def test_edit_renames_the_slug_and_keeps_other_fields(
    client: Client, maintainer: Any, django_capture_on_commit_callbacks: OnCommit
) -> None:
    guru = GuruFactory(slug="old-name", name="Old")
    guru.maintainers.add(maintainer)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/dashboard/g/{guru.slug}/", {**NEW_GURU, "slug": "new-name", "name": "New"})
    assert response.status_code == 302 and response["Location"] == "/dashboard/g/new-name/"
    guru.refresh_from_db()
    assert (guru.slug, guru.name, guru.domain_knowledge) == ("new-name", "New", "Celery task queues")
    assert VectorCollection.objects.get(guru_id=guru.pk).name == collection_name_for("new-name")


def test_delete_shows_what_goes_and_needs_the_slug_typed(
    client: Client, maintainer: Any, django_capture_on_commit_callbacks: OnCommit
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        guru = GuruFactory(slug="doomed")
    guru.maintainers.add(maintainer)
    DataSourceFactory(guru=guru, status=SourceStatus.INDEXED, chunk_count=12)
    DataSourceFactory(guru=guru, status=SourceStatus.INDEXED, chunk_count=30)
    Question.objects.create(guru=guru, user_question="q", question="q", slug="q")
    page = client.get("/dashboard/g/doomed/delete/").content.decode()
    assert "<strong>2</strong> data sources" in page and "<strong>42</strong> indexed chunks" in page
    assert "<strong>1</strong> question " in page

    wrong = client.post("/dashboard/g/doomed/delete/", {"confirm_slug": "nope"}, follow=True)
    assert "Type the guru" in wrong.content.decode() and Guru.objects.filter(pk=guru.pk).exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/dashboard/g/doomed/delete/", {"confirm_slug": "doomed"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert not Guru.objects.filter(pk=guru.pk).exists() and not Question.objects.exists()
    assert collection_name_for("doomed") not in InMemoryVectorStore().list_collections()


def test_maintainer_cannot_see_or_change_another_maintainers_guru(client: Client, maintainer: Any) -> None:
    theirs = GuruFactory(slug="theirs", name="Their guru")
    theirs.maintainers.add(UserFactory(username="bob"))
    assert "Their guru" not in client.get("/").content.decode()
    for url in ["/dashboard/g/theirs/", "/dashboard/g/theirs/delete/"]:
        assert client.get(url).status_code == 404, url
    assert client.post("/dashboard/g/theirs/", {**NEW_GURU, "slug": "theirs"}).status_code == 404
    assert client.post("/dashboard/g/theirs/delete/", {"confirm_slug": "theirs"}).status_code == 404
    assert Guru.objects.get(slug="theirs").name == "Their guru"


def test_superuser_sees_every_guru(client: Client) -> None:
    GuruFactory(name="First guru")
    GuruFactory(name="Second guru")
    client.force_login(UserFactory(username="root", is_superuser=True, is_staff=True))
    page = client.get("/").content.decode()
    assert "First guru" in page and "Second guru" in page and "All gurus" in page


def test_gurus_list_query_count_does_not_grow_with_data(
    client: Client, maintainer: Any, django_assert_max_num_queries: Callable[..., AbstractContextManager[Any]]
) -> None:
    gurus = [GuruFactory() for _ in range(20)]
    for guru in gurus:
        guru.maintainers.add(maintainer)
        DataSourceFactory(guru=guru, status=SourceStatus.PROCESSING)
    Question.objects.bulk_create(
        Question(guru=gurus[i % 20], user_question=f"q{i}", question=f"q{i}", slug=f"q-{i}") for i in range(10_000)
    )
    with django_assert_max_num_queries(8):
        response = client.get("/")
    page = response.content.decode()
    assert page.count("1 indexing") == 20 and ">500</a>" in page


PNG_1PX = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360f8cf"
    "c0f01f0005000201e2ad8e3b0000000049454e44ae426082"
)


def test_an_uploaded_icon_is_stored_served_and_replaced(client: Client, maintainer: Any) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    guru = GuruFactory(slug="iconic")
    guru.maintainers.add(maintainer)
    form = {**NEW_GURU, "slug": "iconic", "icon_file": SimpleUploadedFile("logo.png", PNG_1PX)}
    assert client.post("/dashboard/g/iconic/", form).status_code == 302
    guru.refresh_from_db()
    first = guru.icon.name
    src = client.get("/dashboard/g/iconic/").context["icon_src"]
    served = client.get(src)
    assert served.status_code == 200 and served["Content-Type"] == "image/png"
    assert served["X-Content-Type-Options"] == "nosniff" and b"".join(served) == PNG_1PX

    bigger = PNG_1PX + b"\0"
    client.post("/dashboard/g/iconic/", {**form, "icon_file": SimpleUploadedFile("logo2.png", bigger)})
    guru.refresh_from_db()
    assert guru.icon.name != first and not guru.icon.storage.exists(first)
    assert client.get(src).status_code == 404  # the old version's URL is gone

    src = client.get("/dashboard/g/iconic/").context["icon_src"]
    assert f'src="{src}"' in client.get("/g/iconic/").content.decode()  # the public page shows it
    from backend.api.services import api_key_create

    key = api_key_create(user=maintainer, name="t", guru=guru).raw
    listed = client.get("/api/v1/gurus/", HTTP_X_API_KEY=key).json()["results"][0]
    assert listed["icon_url"] == f"http://testserver{src}"  # absolute: API clients live elsewhere

    client.post("/dashboard/g/iconic/", {**NEW_GURU, "slug": "iconic", "remove_icon": "on"})
    guru.refresh_from_db()
    assert not guru.icon


@pytest.mark.parametrize(("name", "data", "message"), [
    ("evil.svg", b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", "SVG is not accepted"),
    ("huge.png", PNG_1PX + b"\0" * 300_000, "at most 256 KB"),
])
def test_icons_that_are_not_small_raster_images_are_refused(
    client: Client, maintainer: Any, name: str, data: bytes, message: str
) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = client.post("/dashboard/gurus/new/", {**NEW_GURU, "icon_file": SimpleUploadedFile(name, data)})
    assert response.status_code == 200 and message in response.content.decode()
    assert not Guru.objects.exists()


@pytest.mark.parametrize(("path", "tab"), [("", "Overview"), ("delete/", "Overview"), ("sources/", "Sources"),
                                          ("questions/", "Questions"), ("analytics/", "Analytics")])
def test_each_page_marks_its_tab(client: Client, guru: Guru, path: str, tab: str) -> None:
    page = client.get(f"/dashboard/g/{guru.slug}/{path}").content.decode()
    assert page.count('aria-current="page"') == 1
    assert f'class="active" aria-current="page">{tab}</a>' in page


def test_maintainers_can_add_and_remove_co_maintainers_but_never_the_last(
    client: Client, maintainer: Any, guru: Guru
) -> None:
    UserFactory(username="bo", email="Bo@Example.com")
    edit = f"/dashboard/g/{guru.slug}/"
    page = client.post(f"{edit}maintainers/", {"login": "bo@example.com"}, follow=True).content.decode()
    assert "bo now maintains" in page and set(guru.maintainers.values_list("username", flat=True)) == {"ana", "bo"}
    missing = client.post(f"{edit}maintainers/", {"login": "nobody"}, follow=True).content.decode()
    assert "No single active account is called" in missing

    bo = guru.maintainers.get(username="bo")
    client.post(f"{edit}maintainers/{bo.pk}/remove/")
    assert list(guru.maintainers.values_list("username", flat=True)) == ["ana"]
    last = client.post(f"{edit}maintainers/{maintainer.pk}/remove/", follow=True).content.decode()
    assert "at least one maintainer" in last and guru.maintainers.filter(pk=maintainer.pk).exists()


def test_a_maintainer_who_leaves_loses_access(client: Client, maintainer: Any, guru: Guru) -> None:
    guru.maintainers.add(UserFactory(username="bo"))
    response = client.post(f"/dashboard/g/{guru.slug}/maintainers/{maintainer.pk}/remove/")
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get(f"/dashboard/g/{guru.slug}/").status_code == 404


def test_others_cannot_change_the_maintainers_of_a_guru_they_do_not_maintain(client: Client, maintainer: Any) -> None:
    theirs = GuruFactory(slug="theirs")
    owner = UserFactory(username="bob")
    theirs.maintainers.add(owner)
    assert client.post("/dashboard/g/theirs/maintainers/", {"login": "ana"}).status_code == 404
    assert client.post(f"/dashboard/g/theirs/maintainers/{owner.pk}/remove/").status_code == 404
    assert list(theirs.maintainers.all()) == [owner]
