"""An absent name the evidence holds under another form (by the local MiniLM's word cosines) is not absent."""

from __future__ import annotations

import pytest

from backend.adapters import registry
from backend.adapters.embeddings.local_minilm import LocalMiniLMEmbedder
from backend.answering.variants import name_variants

EVIDENCE = ["Address already in use", "On macOS the port may be taken by the AirPlay Receiver. Restart the server "
            "with --port to use another port. PostgreSQL is the database of the examples."]


def test_words_are_compared_by_the_local_model_whatever_embeds_the_chunks() -> None:
    assert isinstance(registry.word_embedder(), LocalMiniLMEmbedder)  # the tests' chunk embedder is a hashing fake


def test_a_thing_the_evidence_names_by_its_kind_or_other_name_is_a_variant() -> None:
    asked = "On my MacBook, after a reboot, postgres says the port is taken"
    assert name_variants(asked, ["macbook", "reboot", "postgr"], EVIDENCE) == {"macbook", "reboot", "postgr"}


def test_a_tool_the_evidence_never_names_is_no_variant_of_a_word_near_it() -> None:
    asked = "Can kafka, terraform, docker or OAuth use the port?"
    assert name_variants(asked, ["kafka", "terraform", "docker", "oauth"], EVIDENCE) == frozenset()


def test_a_named_compound_is_one_product_never_a_variant() -> None:
    asked = "Does Flask-Login run on macOS-X?"
    assert name_variants(asked, ["flask-login", "macos-x"], ["Flask login with macOS"]) == frozenset()


@pytest.mark.parametrize(("names", "texts"), [([], EVIDENCE), (["macbook"], []), (["ipad"], EVIDENCE)])
def test_nothing_is_compared_without_a_name_asked_or_evidence(names: list[str], texts: list[str]) -> None:
    assert name_variants("Is port 5000 free on my MacBook?", names, texts) == frozenset()


def test_a_rival_or_sibling_product_is_not_a_variant() -> None:
    asked = "Does this work with deno, pnpm, mariadb, django, podman or chromium?"
    evidence = ["Run it with node and npm against MySQL from Flask in Docker; open it in Chrome."]
    names = ["deno", "pnpm", "mariadb", "django", "podman", "chromium"]
    assert name_variants(asked, names, evidence) == frozenset()
