"""Which model providers the environment selects: offline by default, keys switch the LLM on."""

from __future__ import annotations

from backend.config.settings.components.models import embedder_from_env, llm_from_env, reranker_from_env


def test_no_environment_means_offline_local_everything() -> None:
    assert llm_from_env({})["PROVIDER"] == "offline"
    assert embedder_from_env({})["BACKEND"] == "local-minilm"
    assert reranker_from_env({})["BACKEND"] == "local"


def test_openai_key_selects_openai_with_its_default_model() -> None:
    config = llm_from_env({"OPENAI_API_KEY": "sk-test"})
    assert (config["PROVIDER"], config["MODEL"], config["API_KEY"], config["BASE_URL"]) == (
        "openai", "gpt-4o-mini", "sk-test", "")


def test_base_url_alone_selects_an_openai_compatible_local_server() -> None:
    config = llm_from_env({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1", "OPENGURU_CHAT_MODEL": "llama3.2"})
    assert (config["PROVIDER"], config["MODEL"], config["BASE_URL"]) == ("openai", "llama3.2",
                                                                          "http://127.0.0.1:11434/v1")
    assert config["API_KEY"]  # the SDK refuses an empty key; Ollama ignores it


def test_gemini_key_selects_gemini() -> None:
    config = llm_from_env({"GEMINI_API_KEY": "g-key"})
    assert (config["PROVIDER"], config["MODEL"], config["API_KEY"]) == ("gemini", "gemini-2.5-flash", "g-key")


def test_explicit_provider_wins() -> None:
    env = {"OPENAI_API_KEY": "sk", "GEMINI_API_KEY": "g", "OPENGURU_LLM_PROVIDER": "gemini"}
    assert llm_from_env(env)["PROVIDER"] == "gemini"
    assert llm_from_env({"OPENAI_API_KEY": "sk", "OPENGURU_LLM_PROVIDER": "offline"})["PROVIDER"] == "offline"


def test_a_key_never_switches_the_embedder_by_itself() -> None:
    assert embedder_from_env({"OPENAI_API_KEY": "sk"})["BACKEND"] == "local-minilm"
    config = embedder_from_env({"OPENAI_API_KEY": "sk", "OPENGURU_EMBEDDER": "openai"})
    assert (config["MODEL"], config["DIMENSION"], config["API_KEY"]) == ("text-embedding-3-small", "1536", "sk")
    config = embedder_from_env({"GEMINI_API_KEY": "g", "OPENGURU_EMBEDDER": "gemini",
                                "OPENGURU_EMBEDDING_DIMENSION": "256"})
    assert (config["MODEL"], config["DIMENSION"]) == ("gemini-embedding-001", "256")


def test_reranker_url_selects_the_http_reranker() -> None:
    config = reranker_from_env({"OPENGURU_RERANKER_URL": "http://reranker:80"})
    assert (config["BACKEND"], config["URL"]) == ("http", "http://reranker:80")
