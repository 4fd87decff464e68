"""The Evaluation tab: sets (create, JSONL import and export, delete), items, seeding from real questions, runs
started from a set, the last runs side by side, one run in full and the threshold explorer."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from pytest_django.fixtures import DjangoCaptureOnCommitCallbacks

from backend.evaluation.models import EvalItem, EvalRun, EvalSet, RunState
from backend.evaluation.sets import parse_jsonl, set_import
from backend.gurus.models import Guru
from tests.dashboard.evaluation_support import GOOD, JSONL, finished_run, flashes, url
from tests.dashboard.questions_support import ask
from tests.factories import GuruFactory, UserFactory

pytestmark = pytest.mark.django_db

# ---- access ---------------------------------------------------------------------------------------


def _pages(guru: Guru, eval_set: EvalSet, run: EvalRun) -> list[tuple[str, str]]:
    item = eval_set.items.first()
    assert item is not None
    s, r = {"set_id": eval_set.pk}, {"run_id": run.pk}
    return [("get", url("evaluation", guru)), ("get", url("evaluation-set", guru, **s)),
            ("get", url("evaluation-set-export", guru, **s)), ("get", url("evaluation-runs", guru)),
            ("get", url("evaluation-run", guru, **r)), ("get", url("evaluation-progress", guru)),
            ("get", url("evaluation-seed", guru)), ("get", url("evaluation-item", guru, **s, item_id=item.pk)),
            ("post", url("evaluation-set-create", guru)), ("post", url("evaluation-import", guru)),
            ("post", url("evaluation-set-delete", guru, **s)), ("post", url("evaluation-item-add", guru, **s)),
            ("post", url("evaluation-item-delete", guru, **s, item_id=item.pk)),
            ("post", url("evaluation-run-start", guru, **s)), ("post", url("evaluation-seed", guru)),
            ("post", url("evaluation-threshold-apply", guru, **r))]


def test_every_page_is_a_404_for_someone_who_does_not_maintain_the_guru(guru: Guru, smoke: EvalSet) -> None:
    run = finished_run(guru, GOOD, eval_set=smoke)
    outsider = Client()
    outsider.force_login(UserFactory(username="eve"))
    for method, path in _pages(guru, smoke, run):
        assert getattr(outsider, method)(path, {"threshold": "0.30", "name": "x"}).status_code == 404, path
    anonymous = Client()
    assert anonymous.get(url("evaluation", guru)).status_code == 302
    assert EvalSet.objects.filter(pk=smoke.pk).exists() and smoke.items.count() == 3
    assert Guru.objects.get(pk=guru.pk).trust_score_threshold is None and not EvalRun.objects.exclude(pk=run.pk)


def test_a_set_of_another_guru_is_a_404_even_for_a_maintainer(client: Client, guru: Guru) -> None:
    other: Guru = GuruFactory(slug="django")
    foreign = set_import(other, "theirs", parse_jsonl(JSONL)).eval_set
    assert client.get(url("evaluation-set", guru, set_id=foreign.pk)).status_code == 404
    assert client.post(url("evaluation-set-delete", guru, set_id=foreign.pk)).status_code == 404
    assert EvalSet.objects.filter(pk=foreign.pk).exists()


def test_posts_need_the_csrf_token(guru: Guru, maintainer: Any) -> None:
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(maintainer)
    assert strict.post(url("evaluation-set-create", guru), {"create-name": "smoke"}).status_code == 403
    assert not EvalSet.objects.exists()


# ---- sets -----------------------------------------------------------------------------------------


def test_the_tab_lists_sets_with_their_size_and_last_run(client: Client, guru: Guru, smoke: EvalSet) -> None:
    run = finished_run(guru, GOOD, eval_set=smoke)
    EvalSet.objects.create(guru=guru, name="empty")
    response = client.get(url("evaluation", guru))
    html = response.content.decode()
    assert response.status_code == 200
    assert re.search(r'<a href="/dashboard/g/celery/evaluation/"[^>]*aria-current="page"', html)  # the guru tab
    assert [(r.eval_set.name, r.item_count, r.last_run_id) for r in response.context["rows"]] == [
        ("empty", 0, None), ("smoke", 3, run.pk)]
    assert url("evaluation-run", guru, run_id=run.pk) in html and "never" in html


def test_create_a_set_and_a_taken_name_is_a_form_error(client: Client, guru: Guru, smoke: EvalSet) -> None:
    response = client.post(url("evaluation-set-create", guru), {"create-name": "release"})
    created = EvalSet.objects.get(guru=guru, name="release")
    assert response.status_code == 302 and response["Location"] == url("evaluation-set", guru, set_id=created.pk)
    again = client.post(url("evaluation-set-create", guru), {"create-name": "smoke"})
    assert again.status_code == 400 and "There is already a set named “smoke”." in again.content.decode()
    too_long = client.post(url("evaluation-set-create", guru), {"create-name": "x" * 101})
    assert too_long.status_code == 400 and EvalSet.objects.filter(guru=guru).count() == 2


def test_import_pasted_jsonl_creates_the_set(client: Client, guru: Guru) -> None:
    response = client.post(url("evaluation-import", guru), {"import-name": "smoke", "import-mode": "append",
                                                            "import-text": JSONL})
    eval_set = EvalSet.objects.get(guru=guru, name="smoke")
    assert response.status_code == 302 and response["Location"] == url("evaluation-set", guru, set_id=eval_set.pk)
    assert "Imported into “smoke”: 3 questions added." in flashes(response)
    page = client.get(response["Location"]).content.decode()
    assert "How do I retry a task?" in page and "docs/retry.md" in page and "Unrelated to the guru" in page
    assert "after: How do I retry a task?" in page and "self.retry()" in page


@pytest.mark.parametrize(("text", "message"), [
    (JSONL + '{"question": "ok"}\n{"question": \n', "Line 5: not valid JSON"),
    ('{"question": "fine"}\n\n{"expected_sources": ["x"]}\n', "Line 3: &#x27;question&#x27; must be text"),
    ('{"question": "q", "refusal_kind": "maybe"}\n', "Line 1: &#x27;refusal_kind&#x27; must be one of"),
    ('{"question": "q", "refusal_kind": "unrelated", "expected_sources": ["a"]}\n',
     "Line 1: a question that should be refused has no expected sources or facts."),
    ("// only a comment\n", "The file holds no questions."),
])
def test_import_errors_are_shown_with_their_line_number(client: Client, guru: Guru, text: str, message: str) -> None:
    response = client.post(url("evaluation-import", guru), {"import-name": "smoke", "import-mode": "append",
                                                            "import-text": text})
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not EvalSet.objects.exists()


def test_import_a_file_into_a_set_appends_or_replaces(client: Client, guru: Guru, smoke: EvalSet) -> None:
    extra = SimpleUploadedFile("more.jsonl", '\ufeff{"question": "What is a chord?"}\n'.encode())
    response = client.post(url("evaluation-set-import", guru, set_id=smoke.pk), {"import-mode": "append",
                                                                                  "import-file": extra})
    assert response.status_code == 302 and smoke.items.count() == 4  # the byte-order mark is no error
    again = SimpleUploadedFile("only.jsonl", b'{"question": "Only this one?"}\n')
    client.post(url("evaluation-set-import", guru, set_id=smoke.pk), {"import-mode": "replace", "import-file": again})
    assert list(smoke.items.values_list("question", flat=True)) == ["Only this one?"]
    bad = SimpleUploadedFile("bad.jsonl", b'{"question": "a"}\n[1, 2]\n')
    failed = client.post(url("evaluation-set-import", guru, set_id=smoke.pk), {"import-mode": "replace",
                                                                                "import-file": bad})
    assert failed.status_code == 400 and "Line 2: expected a JSON object." in failed.content.decode()
    assert smoke.items.count() == 1  # nothing replaced by a file that does not read
    both = client.post(url("evaluation-set-import", guru, set_id=smoke.pk), {
        "import-mode": "append", "import-text": JSONL, "import-file": SimpleUploadedFile("a.jsonl", b"{}")})
    assert both.status_code == 400 and "Choose a file or paste the text, not both." in both.content.decode()
    binary = SimpleUploadedFile("b.jsonl", b"\xff\xfe\x00\x01")
    assert "not UTF-8" in client.post(url("evaluation-set-import", guru, set_id=smoke.pk), {
        "import-mode": "append", "import-file": binary}).content.decode()


def test_importing_a_set_again_adds_only_the_questions_it_does_not_ask(client: Client, guru: Guru,
                                                                          smoke: EvalSet) -> None:
    """The same file imported twice, or a question differing only in case and spacing, is not asked twice; the
    same words after another history are another question."""
    rows = [{"question": "how do I   retry a task?"}, {"question": "How do I retry a task?", "history": ["Hi"]},
            {"question": "What is a chord?"}, {"question": "What is a chord?"}]
    text = "".join(json.dumps(row) + "\n" for row in rows)
    response = client.post(url("evaluation-set-import", guru, set_id=smoke.pk), {"import-mode": "append",
                                                                                  "import-text": text})
    assert response.status_code == 302 and smoke.items.count() == 5
    assert flashes(response) == ["Imported into “smoke”: 2 questions added, 2 questions left out as already asked."]
    again = client.post(url("evaluation-set-import", guru, set_id=smoke.pk), {"import-mode": "append",
                                                                               "import-text": JSONL})
    assert smoke.items.count() == 5 and "0 questions added, 3 questions left out" in flashes(again)[-1]


def test_export_is_a_jsonl_download_equal_to_the_imported_file(client: Client, guru: Guru) -> None:
    upload = SimpleUploadedFile("smoke.jsonl", JSONL.encode())
    client.post(url("evaluation-import", guru), {"import-name": "smoke / v2", "import-mode": "append",
                                                 "import-file": upload})
    eval_set = EvalSet.objects.get(guru=guru, name="smoke / v2")
    response = client.get(url("evaluation-set-export", guru, set_id=eval_set.pk))
    assert response.status_code == 200 and response["Content-Type"].startswith("application/x-ndjson")
    assert response["Content-Disposition"] == 'attachment; filename="celery-smoke-v2.jsonl"'
    assert response.content.decode() == JSONL
    client.post(url("evaluation-import", guru), {"import-name": "copy", "import-mode": "append",
                                                 "import-file": SimpleUploadedFile("c.jsonl", response.content)})
    copy = EvalSet.objects.get(guru=guru, name="copy")
    assert client.get(url("evaluation-set-export", guru, set_id=copy.pk)).content == response.content


def test_delete_a_set_after_confirming_keeps_its_runs(client: Client, guru: Guru, smoke: EvalSet) -> None:
    run = finished_run(guru, GOOD, eval_set=smoke)
    confirm = client.get(url("evaluation-set-delete", guru, set_id=smoke.pk))
    assert confirm.status_code == 200 and "Its 3 questions are deleted." in confirm.content.decode()
    assert EvalSet.objects.filter(pk=smoke.pk).exists()
    response = client.post(url("evaluation-set-delete", guru, set_id=smoke.pk))
    assert response.status_code == 302 and not EvalSet.objects.exists() and not EvalItem.objects.exists()
    run.refresh_from_db()
    assert run.eval_set_id is None and run.set_name == "smoke"
    assert client.get(url("evaluation-runs", guru)).status_code == 200


# ---- items ----------------------------------------------------------------------------------------


def test_add_edit_and_delete_an_item_with_lists_one_per_line(client: Client, guru: Guru, smoke: EvalSet) -> None:
    response = client.post(url("evaluation-item-add", guru, set_id=smoke.pk), {
        "item-question": "  What does acks_late do? ", "item-category": "semantic", "item-refusal_kind": "",
        "item-expected_sources": "Acknowledgements\n\n  docs/acks.md  \n", "item-expected_facts": "after the task",
        "item-history": ""})
    item = smoke.items.get(question="What does acks_late do?")
    assert response.status_code == 302 and response["Location"].endswith(f"#item-{item.pk}")
    assert item.position == 3 and item.expected_sources == ["Acknowledgements", "docs/acks.md"]
    assert item.expected_facts == ["after the task"] and item.category == "semantic"

    edit = client.get(url("evaluation-item", guru, set_id=smoke.pk, item_id=item.pk))
    assert "Acknowledgements\ndocs/acks.md</textarea>" in edit.content.decode()
    client.post(url("evaluation-item", guru, set_id=smoke.pk, item_id=item.pk), {
        "question": "What does acks_late change?", "category": "", "refusal_kind": "", "expected_sources": "",
        "expected_facts": "", "history": "Do tasks get lost?\nWhen?"})
    item.refresh_from_db()
    assert (item.question, item.expected_sources, item.history) == ("What does acks_late change?", [],
                                                                    ["Do tasks get lost?", "When?"])

    client.post(url("evaluation-item-delete", guru, set_id=smoke.pk, item_id=item.pk))
    assert not smoke.items.filter(pk=item.pk).exists() and smoke.items.count() == 3


@pytest.mark.parametrize(("fields", "message"), [
    ({"refusal_kind": "near_miss", "expected_sources": "Manual"}, "A question that should be refused has no"),
    ({"expected_facts": "x" * 301}, "Line 1 is longer than 300 characters."),
    ({"expected_sources": "\n".join(f"page {i}" for i in range(21))}, "At most 20 lines; this has 21."),
    ({"question": "   "}, "This field is required."),
    ({"refusal_kind": "sometimes"}, "Select a valid choice."),
])
def test_an_invalid_item_is_a_form_error(client: Client, guru: Guru, smoke: EvalSet, fields: dict[str, str],
                                         message: str) -> None:
    data = {"question": "Is it valid?", "category": "", "refusal_kind": "", "expected_sources": "",
            "expected_facts": "", "history": "", **fields}
    response = client.post(url("evaluation-item-add", guru, set_id=smoke.pk), {f"item-{k}": v for k, v in data.items()})
    assert response.status_code == 400 and message in response.content.decode()
    assert smoke.items.count() == 3


# ---- seeding from real questions ------------------------------------------------------------------


def _answered(guru: Guru, text: str, cited: list[str], retrieved: list[str]) -> Any:
    references = [{"n": i, "title": title, "link": f"https://docs.example.com/{title.lower().replace(' ', '-')}",
                   "cited": title in cited} for i, title in enumerate([*cited, *retrieved], start=1)]
    return ask(guru, text, references=references)


def test_ticked_questions_become_draft_items_with_their_cited_sources(client: Client, guru: Guru,
                                                                        smoke: EvalSet) -> None:
    retry = _answered(guru, "How do I retry a task?", ["Retrying tasks"], ["Retry limits"])
    wait = _answered(guru, "How long does a retry wait?", ["Retry countdown", "Retrying tasks"], [])
    foreign = ask(GuruFactory(slug="django"), "Not yours")
    listing = client.get(url("questions", guru)).content.decode()
    assert f'name="ids" value="{retry.pk}"' in listing and url("evaluation-seed", guru) in listing

    chooser = client.get(url("evaluation-seed", guru), {"ids": [retry.pk, wait.pk, foreign.pk]})
    assert chooser.status_code == 200 and [q.pk for q in chooser.context["questions"]] == [retry.pk, wait.pk]
    assert f'value="{smoke.pk}"' in chooser.content.decode()  # the existing sets are offered

    response = client.post(url("evaluation-seed", guru), {"ids": [retry.pk, wait.pk, foreign.pk],
                                                          "eval_set": "new", "new_name": "from users"})
    seeded = EvalSet.objects.get(guru=guru, name="from users")
    assert response.status_code == 302 and response["Location"].startswith(url("evaluation-set", guru,
                                                                                set_id=seeded.pk))
    assert "Added 2 questions to “from users” as drafts" in flashes(response)[0]
    items = list(seeded.items.all())
    assert [i.question for i in items] == ["how do i retry a task?", "how long does a retry wait?"]
    assert items[0].expected_sources == ["https://docs.example.com/retrying-tasks"]  # cited, not merely retrieved
    assert items[1].expected_sources == ["https://docs.example.com/retry-countdown",
                                         "https://docs.example.com/retrying-tasks"]
    assert items[0].from_question_id == retry.pk
    page = client.get(url("evaluation-set", guru, set_id=seeded.pk)).content.decode()
    assert page.count("draft · from a question") == 2

    again = client.post(url("evaluation-seed", guru), {"ids": [retry.pk, wait.pk], "eval_set": str(smoke.pk),
                                                       "new_name": ""})
    assert smoke.items.count() == 4  # smoke asks "How do I retry a task?" already: only the other one is added
    assert "Added 1 question to “smoke” as drafts (1 was in it already)" in flashes(again)[0]
    repeat = client.post(url("evaluation-seed", guru), {"ids": [retry.pk], "eval_set": str(smoke.pk),
                                                        "new_name": ""})
    assert smoke.items.count() == 4 and flashes(repeat)[-1] == "“smoke” already asks the ticked question."


def test_seeding_without_a_usable_question_says_so(client: Client, guru: Guru) -> None:
    nothing = client.get(url("evaluation-seed", guru))
    assert nothing.status_code == 400 and "Tick at least one question." in nothing.content.decode()
    junk = client.get(url("evaluation-seed", guru), {"ids": ["1; drop", "2"]})
    assert junk.status_code == 400 and "That selection is not valid." in junk.content.decode()
    too_many = client.get(url("evaluation-seed", guru), {"ids": [str(i) for i in range(1, 102)]})
    assert "Add at most 100 questions at a time." in too_many.content.decode()
    nameless = client.post(url("evaluation-seed", guru), {"ids": [ask(guru, "Q?").pk], "eval_set": "new"})
    assert nameless.status_code == 400 and "Name the new set." in nameless.content.decode()
    assert not EvalSet.objects.exists()


# ---- starting a run -------------------------------------------------------------------------------


def test_run_evaluation_starts_one_run_and_a_second_is_refused(client: Client, guru: Guru, smoke: EvalSet,
                                                                django_capture_on_commit_callbacks:
                                                                DjangoCaptureOnCommitCallbacks) -> None:
    with django_capture_on_commit_callbacks() as queued:  # the worker's task is queued, not run
        response = client.post(url("evaluation-run-start", guru, set_id=smoke.pk))
    run = EvalRun.objects.get(guru=guru)
    assert len(queued) == 1 and run.state == RunState.RUNNING and run.total == 3 and run.created_by is not None
    assert response["Location"] == url("evaluation-run", guru, run_id=run.pk)
    page = client.get(response["Location"]).content.decode()
    assert 'data-state="running"' in page and "answering 0/3" in page
    EvalRun.objects.filter(pk=run.pk).update(done=2)
    progress = client.get(url("evaluation-progress", guru), {"ids": str(run.pk)}).json()
    assert progress == {"runs": [{"id": run.pk, "state": "running", "done": 2, "total": 3,
                                  "text": "answering 2/3"}], "latest": run.pk}

    again = client.post(url("evaluation-run-start", guru, set_id=smoke.pk))
    assert EvalRun.objects.count() == 1 and again["Location"] == url("evaluation-run", guru, run_id=run.pk)
    assert "An evaluation of this guru is already running" in flashes(again)[0]
    listing = client.get(url("evaluation", guru)).content.decode()
    assert "answering 2/3" in listing  # the tab says a run is going on


def test_an_empty_set_cannot_run(client: Client, guru: Guru) -> None:
    empty = EvalSet.objects.create(guru=guru, name="empty")
    response = client.post(url("evaluation-run-start", guru, set_id=empty.pk))
    assert "This set has no questions yet." in flashes(response) and not EvalRun.objects.exists()


def test_progress_rejects_junk_ids(client: Client, guru: Guru) -> None:
    assert client.get(url("evaluation-progress", guru), {"ids": "1,x"}).status_code == 400
    assert client.get(url("evaluation-progress", guru), {"ids": ",".join(["1"] * 11)}).status_code == 400
    assert client.get(url("evaluation-progress", guru)).json() == {"runs": [], "latest": None}
