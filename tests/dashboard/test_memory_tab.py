"""The Memory tab (notes by status, add, approve, reject, edit, delete) and correcting an answer from its page."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from backend.answering.memory import MAX_MEMORY_CHARS, memory_add
from backend.answering.models import Memory, MemoryOrigin, MemoryStatus, Question
from backend.gurus.models import Guru
from tests.factories import GuruFactory, UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.production_profile]  # PostgreSQL too: the query counts

TAB = "/dashboard/g/celery/memory/"


def note(guru: Guru, text: str, status: MemoryStatus = MemoryStatus.PROPOSED,
         origin: MemoryOrigin = MemoryOrigin.CONVERSATION, **fields: Any) -> Memory:
    return memory_add(guru=guru, text=text, origin=origin, status=status, **fields)


def revised(memory: Memory, text: str) -> Memory:
    """The note with a revision the model proposed for it (as answering.memory's proposals leave it)."""
    Memory.objects.filter(pk=memory.pk).update(proposed_text=text)
    memory.refresh_from_db()
    return memory


def asked(guru: Guru, *, feedback: int | None = None) -> Question:
    return Question.objects.create(guru=guru, user_question="q", question="How do I retry a task?", slug="q",
                                   content="Call retry() [1].", feedback=feedback)


def fresh(memory: Memory) -> Memory:
    memory.refresh_from_db()
    return memory


@pytest.fixture
def other_guru() -> Guru:
    created: Guru = GuruFactory(slug="django", name="Django Guru")
    created.maintainers.add(UserFactory(username="bo"))
    return created


# ---- the page ---------------------------------------------------------------------------------------------------


def test_the_tab_lists_each_group_with_its_count(client: Client, guru: Guru, maintainer: Any) -> None:
    question = asked(guru)
    proposed = note(guru, "Tasks retry three times by default.", question=question)
    approved = note(guru, "The broker is Redis.", MemoryStatus.APPROVED, MemoryOrigin.MAINTAINER, author=maintainer)
    pending = revised(note(guru, "Use acks_late for long tasks.", MemoryStatus.APPROVED, MemoryOrigin.CORRECTION),
                      "Use acks_late and a visibility timeout for long tasks.")
    rejected = note(guru, "The sky is green.", MemoryStatus.REJECTED)
    note(GuruFactory(slug="django"), "Another guru's note.", MemoryStatus.APPROVED)

    response = client.get(TAB)
    assert response.status_code == 200
    groups = {g.key: [m.pk for m in g.page.object_list] for g in response.context["groups"]}
    assert groups == {"waiting": [pending.pk, proposed.pk], "approved": [approved.pk], "rejected": [rejected.pk]}
    html = response.content.decode()
    assert 'aria-current="page">Memory</a>' in html
    assert 'Waiting for approval <span class="badge warn">2</span>' in html
    assert 'Approved <span class="badge">1</span>' in html and 'Rejected <span class="badge">1</span>' in html
    assert '<details class="card mm-group" id="rejected">' in html  # folded
    assert "cited as “Maintainer note”" in html and f'maxlength="{MAX_MEMORY_CHARS}"' in html
    # A pending revision is shown beside the text in use; the note's origin, author and question are named.
    assert "Use acks_late for long tasks." in html and "Use acks_late and a visibility timeout" in html
    assert "Approve the revision" in html and "Reject the revision" in html
    assert "Proposed by the model from a conversation" in html and "Written by a maintainer" in html
    assert "by ana" in html and f'href="/dashboard/g/celery/questions/{question.pk}/"' in html
    assert "Another guru's note." not in html


def test_an_empty_tab_says_so(client: Client, guru: Guru) -> None:
    html = client.get(TAB).content.decode()
    assert "Nothing waits for approval." in html and "No approved note yet." in html


def test_the_tab_reads_a_fixed_number_of_queries(
    client: Client, guru: Guru, django_assert_max_num_queries: Any,
) -> None:
    question = asked(guru)
    for n in range(120):
        note(guru, f"Fact number {n}.", (MemoryStatus.PROPOSED, MemoryStatus.APPROVED)[n % 2], question=question)
    with django_assert_max_num_queries(9):  # session, user, guru, then a count and a page per group
        response = client.get(TAB, {"approved_page": "2"})
    assert response.context["groups"][1].page.number == 2
    html = response.content.decode()
    assert "Page 2 of 2" in html and 'href="?approved_page=1#approved" rel="prev"' in html
    with django_assert_max_num_queries(9):
        html = client.get(TAB, {"approved_page": "2", "waiting_page": "2"}).content.decode()
    assert 'href="?approved_page=1&amp;waiting_page=2#approved"' in html  # the other group's page is kept


# ---- adding a note ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "x" * (MAX_MEMORY_CHARS + 1)])
def test_a_note_needs_text_within_the_limit(client: Client, guru: Guru, text: str) -> None:
    response = client.post(f"{TAB}add/", {"text": text})
    assert response.status_code == 400
    assert 'class="errorlist' in response.content.decode()
    assert not Memory.objects.exists()


def test_a_maintainers_note_is_approved_at_once(client: Client, guru: Guru, maintainer: Any) -> None:
    response = client.post(f"{TAB}add/", {"text": "  The broker is   Redis.  "})
    memory = Memory.objects.get()
    assert response.status_code == 302 and response["Location"] == f"{TAB}#memory-{memory.pk}"
    assert (memory.text, memory.status, memory.origin) == ("The broker is Redis.", "APPROVED", "MAINTAINER")
    assert memory.author == maintainer and memory.guru == guru
    page = client.get(TAB)
    assert "Added the note" in page.content.decode()
    assert [m.pk for m in page.context["groups"][1].page.object_list] == [memory.pk]


# ---- approving, rejecting, editing, deleting --------------------------------------------------------------------


def test_approving_a_proposal(client: Client, guru: Guru) -> None:
    memory = note(guru, "Tasks retry three times by default.")
    response = client.post(f"{TAB}{memory.pk}/approve/", follow=True)
    assert fresh(memory).status == MemoryStatus.APPROVED
    assert "Approved the note" in response.content.decode()


def test_approving_a_revision_replaces_the_text(client: Client, guru: Guru) -> None:
    memory = revised(note(guru, "Old fact.", MemoryStatus.APPROVED), "New fact.")
    response = client.post(f"{TAB}{memory.pk}/approve/", follow=True)
    memory = fresh(memory)
    assert (memory.text, memory.proposed_text, memory.status) == ("New fact.", "", MemoryStatus.APPROVED)
    assert "Applied the proposed revision" in response.content.decode()


def test_rejecting_a_proposal(client: Client, guru: Guru) -> None:
    memory = note(guru, "The sky is green.")
    response = client.post(f"{TAB}{memory.pk}/reject/", follow=True)
    assert fresh(memory).status == MemoryStatus.REJECTED
    assert "Rejected the note" in response.content.decode()


def test_rejecting_a_revision_keeps_the_approved_note(client: Client, guru: Guru) -> None:
    memory = revised(note(guru, "Old fact.", MemoryStatus.APPROVED), "Worse fact.")
    response = client.post(f"{TAB}{memory.pk}/reject/", follow=True)
    memory = fresh(memory)
    assert (memory.text, memory.proposed_text, memory.status) == ("Old fact.", "", MemoryStatus.APPROVED)
    assert "Dropped the proposed revision" in response.content.decode()


def test_editing_a_note(client: Client, guru: Guru) -> None:
    memory = note(guru, "Old fact.", MemoryStatus.APPROVED)
    url = f"{TAB}{memory.pk}/edit/"
    assert "Old fact." in client.get(url).content.decode()
    refused = client.post(url, {"text": " "})
    assert refused.status_code == 400 and 'class="errorlist' in refused.content.decode()
    assert fresh(memory).text == "Old fact."
    response = client.post(url, {"text": "New fact."})
    assert response.status_code == 302 and response["Location"] == f"{TAB}#memory-{memory.pk}"
    assert fresh(memory).text == "New fact." and memory.status == MemoryStatus.APPROVED


def test_deleting_a_note(client: Client, guru: Guru) -> None:
    memory = note(guru, "Old fact.", MemoryStatus.REJECTED)
    response = client.post(f"{TAB}{memory.pk}/delete/", follow=True)
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert "Deleted the note “Old fact.”" in response.content.decode()


def test_actions_are_posts(client: Client, guru: Guru) -> None:
    memory = note(guru, "A fact.")
    for action in ("approve", "reject", "delete"):
        assert client.get(f"{TAB}{memory.pk}/{action}/").status_code == 405
    assert client.get(f"{TAB}add/").status_code == 405
    assert fresh(memory).status == MemoryStatus.PROPOSED


# ---- correcting an answer from its page -------------------------------------------------------------------------


def test_correcting_an_answer(client: Client, guru: Guru, maintainer: Any) -> None:
    question = asked(guru)
    page = f"/dashboard/g/celery/questions/{question.pk}/"
    html = client.get(page).content.decode()
    assert "Correct this answer" in html and "No note was written from this question yet." in html
    response = client.post(f"{page}correct/", {"text": "Retries default to three."})
    assert response.status_code == 302 and response["Location"] == f"{page}#dq-memory"
    memory = Memory.objects.get()
    assert (memory.text, memory.status, memory.origin) == ("Retries default to three.", "APPROVED", "CORRECTION")
    assert memory.question == question and memory.author == maintainer and memory.guru == guru
    html = client.get(page).content.decode()
    assert 'It is listed on the <a href="/dashboard/g/celery/memory/">Memory</a> tab.' in html
    assert "Retries default to three." in html and '<span class="badge ok">Approved</span>' in html


def test_resolving_a_thumbs_down(client: Client, guru: Guru) -> None:
    question = asked(guru, feedback=-1)
    page = f"/dashboard/g/celery/questions/{question.pk}/"
    assert "Resolve this 👎 with a note" in client.get(page).content.decode()
    client.post(f"{page}correct/", {"text": "Retries default to three."})
    assert Memory.objects.get().origin == MemoryOrigin.FEEDBACK


def test_an_empty_correction_is_refused_on_the_page(client: Client, guru: Guru) -> None:
    question = asked(guru)
    response = client.post(f"/dashboard/g/celery/questions/{question.pk}/correct/", {"text": ""})
    assert response.status_code == 400
    html = response.content.decode()
    assert 'class="errorlist' in html and "How do I retry a task?" in html
    assert not Memory.objects.exists()


def test_the_question_page_lists_its_notes_of_any_status(client: Client, guru: Guru) -> None:
    question = asked(guru)
    note(guru, "A proposal from this question.", question=question)
    note(guru, "A rejected one.", MemoryStatus.REJECTED, question=question)
    note(guru, "Not about this question.", MemoryStatus.APPROVED)
    response = client.get(f"/dashboard/g/celery/questions/{question.pk}/")
    assert [m.text for m in response.context["memories"]] == ["A rejected one.", "A proposal from this question."]
    html = response.content.decode()
    assert '<span class="badge warn">Proposed</span>' in html and '<span class="badge error">Rejected</span>' in html


# ---- who may ----------------------------------------------------------------------------------------------------


def _urls(memory: Memory, question: Question) -> list[tuple[str, str]]:
    slug, tab = memory.guru.slug, f"/dashboard/g/{memory.guru.slug}/memory/"
    return [("get", tab), ("post", f"{tab}add/"), ("get", f"{tab}{memory.pk}/edit/"),
            *[("post", f"{tab}{memory.pk}/{action}/") for action in ("approve", "reject", "edit", "delete")],
            ("post", f"/dashboard/g/{slug}/questions/{question.pk}/correct/")]


def test_another_user_gets_404_everywhere(client: Client, guru: Guru) -> None:
    memory, question = note(guru, "A proposal."), asked(guru)
    client.force_login(UserFactory(username="eve"))
    for method, url in _urls(memory, question):
        assert getattr(client, method)(url, {"text": "Overwritten."}).status_code == 404, url
    assert Memory.objects.get() == memory and fresh(memory).text == "A proposal."


def test_a_maintainer_gets_404_for_another_gurus_notes_and_questions(
    client: Client, guru: Guru, other_guru: Guru,
) -> None:
    memory, question = note(other_guru, "Django's note."), asked(other_guru)
    for method, url in _urls(memory, question):
        assert getattr(client, method)(url, {"text": "Overwritten."}).status_code == 404, url
    # Nor through the guru she maintains: the note's and the question's ids are looked up within it.
    for action in ("approve", "reject", "edit", "delete"):
        assert client.post(f"{TAB}{memory.pk}/{action}/", {"text": "Overwritten."}).status_code == 404
    assert client.post(f"/dashboard/g/celery/questions/{question.pk}/correct/", {"text": "x"}).status_code == 404
    assert client.post(f"{TAB}{2**63}/approve/").status_code == 404
    assert Memory.objects.count() == 1 and fresh(memory).text == "Django's note."
    assert fresh(memory).status == MemoryStatus.PROPOSED


def test_signed_out_visitors_are_sent_to_log_in(client: Client, guru: Guru) -> None:
    client.logout()
    response = client.get(TAB)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
