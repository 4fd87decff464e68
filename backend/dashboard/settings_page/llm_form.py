"""The instance Settings page's chat provider form: provider, base URL, API key (write-only) and default model."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django import forms
from django.conf import settings

from backend.adapters import registry
from backend.adapters.net_guard import Resolver, system_resolver
from backend.config.settings.components.models import LLM_PROVIDER_VARIABLES, LLM_VARIABLES
from backend.core.llm_config import config_from_row
from backend.core.models import LlmProvider, Settings
from backend.dashboard.settings_page.selectors import chat_model_check, safe_url
from backend.pipeline.errors import ServiceError

# AWS's IPv6 metadata address sits inside fc00::/7, which counts as private; the IPv4 ones are link-local or
# in 100.64.0.0/10, neither of which a model server uses.
_METADATA_V6 = ipaddress.ip_address("fd00:ec2::254")
NEEDS_KEY = {LlmProvider.OPENAI: "OpenAI", LlmProvider.GEMINI: "Gemini"}
PROVIDER_FIELDS = ("llm_provider", "llm_base_url", "api_key", "clear_api_key")


def base_url_problem(url: str, *, resolver: Resolver = system_resolver) -> str:
    """Why a model server cannot live at `url` ("" if it can).

    Staff choose this URL, as they could OPENAI_BASE_URL: loopback and private addresses are allowed (a local
    Ollama at http://127.0.0.1:11434/v1, vLLM on the LAN) without OPENGURU_FETCH_ALLOWLIST, which guards what
    maintainers make the server fetch. Link-local and cloud metadata addresses are refused: no model server
    lives there, the instance's cloud credentials do, and a connection test would quote their replies.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "Use an http:// or https:// URL with a host, e.g. http://127.0.0.1:11434/v1 for Ollama."
    if parts.username or parts.password:
        return "Put the key in the API key field, not in the URL."
    if parts.query or parts.fragment:
        return "Leave out ?query and #fragment: the client adds the API's paths to this URL."
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = resolver(parts.hostname, port)
    except ValueError:
        return "The URL has an invalid port."
    except ServiceError as exc:
        return str(exc)
    for text in addresses:
        address = ipaddress.ip_address(text.split("%")[0])
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        public_or_own = address.is_global or address.is_loopback or address.is_private
        if address.is_link_local or address.is_multicast or address == _METADATA_V6 or not public_or_own:
            return (f"{parts.hostname} resolves to {text}, a link-local or cloud metadata address: no model server "
                    "lives there.")
    return ""


@dataclass(frozen=True)
class LlmEnvironment:
    """The LLM environment variables: which are set, and whether they choose the provider (then they win)."""

    wins: bool
    set_variables: tuple[str, ...]
    variables: tuple[str, ...] = LLM_VARIABLES
    provider_variables: tuple[str, ...] = LLM_PROVIDER_VARIABLES


def llm_environment() -> LlmEnvironment:
    named = tuple(settings.OPENGURU_LLM.get("ENV", "").split())
    return LlmEnvironment(wins=registry.llm_env_wins(), set_variables=named)


class LlmProviderForm(forms.ModelForm):
    """Saved chat provider settings; the key is never rendered back (blank keeps it, Clear removes it)."""

    api_key = forms.CharField(required=False, label="API key", widget=forms.PasswordInput(
        render_value=False, attrs={"autocomplete": "new-password", "spellcheck": "false"}))
    clear_api_key = forms.BooleanField(required=False, label="Clear the saved key")

    class Meta:
        model = Settings
        fields = ["llm_provider", "llm_base_url", "api_key", "clear_api_key", "answer_model"]
        labels = {"llm_provider": "Chat provider", "llm_base_url": "Base URL", "answer_model": "Default model"}
        help_texts = {
            "llm_base_url": "Required for an OpenAI-compatible server, e.g. http://127.0.0.1:11434/v1 (Ollama), "
                            "http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:1234/v1 (LM Studio). Blank uses "
                            "OpenAI's or Google's own endpoint.",
            "answer_model": "Model id for gurus without their own. Blank uses OPENGURU_CHAT_MODEL or the "
                            "provider's default (gpt-4o-mini, gemini-2.5-flash); a compatible server needs one.",
        }
        widgets = {"llm_base_url": forms.URLInput(attrs={"placeholder": "http://127.0.0.1:11434/v1"}),
                   "answer_model": forms.TextInput(attrs={"list": "llm-models", "autocomplete": "off"})}

    def __init__(self, *args: Any, check_model: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.warnings: list[str] = []  # for the view to show once saved
        self.check_model = check_model
        self.env = llm_environment()
        self.key_saved = bool(self.instance.llm_api_key)
        self.fields["api_key"].help_text = (
            "A key is set. Leave blank to keep it, type a new one to replace it, or tick Clear." if self.key_saved
            else "Stored encrypted and never shown again. Optional for a local OpenAI-compatible server.")
        if self.env.wins:
            self._show_environment()

    def _show_environment(self) -> None:
        """The environment's values, read-only: the variables override whatever this form would save."""
        config = registry.llm_config()
        provider = config.get("PROVIDER", LlmProvider.OFFLINE)
        if provider == LlmProvider.OPENAI and config.get("BASE_URL"):
            provider = LlmProvider.COMPATIBLE  # OPENAI_BASE_URL points the OpenAI client at another server
        self.initial.update(llm_provider=provider, llm_base_url=safe_url(config.get("BASE_URL", "")),
                            api_key="", clear_api_key=False)
        for name in PROVIDER_FIELDS:
            self.fields[name].disabled = True
        self.fields["api_key"].help_text = "Set in the environment; never shown." if config.get("API_KEY") \
            else "Not set in the environment."

    def key_after_save(self) -> str:
        """The key these values would keep: a typed one, none if cleared, else the saved one."""
        typed = self.cleaned_data.get("api_key") or ""
        if typed:
            return typed
        return "" if self.cleaned_data.get("clear_api_key") else self.instance.llm_api_key

    def candidate(self) -> registry.Config:
        """The registry configuration these values make (the environment's where it wins)."""
        model = (self.cleaned_data.get("answer_model") or "").strip()
        if self.env.wins:
            config = registry.llm_config()
            return {**config, "MODEL": model or config.get("MODEL", "")}
        row = {"llm_provider": self.cleaned_data.get("llm_provider"), "answer_model": model,
               "llm_base_url": self.cleaned_data.get("llm_base_url") or "", "llm_api_key": self.key_after_save()}
        return {**settings.OPENGURU_LLM, **config_from_row(row)}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or self.cleaned_data
        cleaned["answer_model"] = (cleaned.get("answer_model") or "").strip()
        if not self.env.wins:
            self._clean_provider(cleaned)
        if self.check_model and not self.errors:
            self._check_model(cleaned)
        return cleaned

    def _clean_provider(self, cleaned: dict[str, Any]) -> None:
        provider, url = cleaned.get("llm_provider"), (cleaned.get("llm_base_url") or "").strip()
        cleaned["llm_base_url"] = url
        if provider == LlmProvider.COMPATIBLE and not url:
            self.add_error("llm_base_url", "An OpenAI-compatible server needs its base URL, e.g. "
                                           "http://127.0.0.1:11434/v1 for Ollama.")
        elif url and provider != LlmProvider.OFFLINE and (problem := base_url_problem(url)):
            self.add_error("llm_base_url", problem)
        if provider in NEEDS_KEY and not self.key_after_save():
            self.add_error("api_key", f"{NEEDS_KEY[provider]} needs an API key.")
        if provider == LlmProvider.COMPATIBLE and not cleaned["answer_model"]:
            self.add_error("answer_model", "Name the model the server answers with, e.g. llama3.2.")

    def _provider_changed(self) -> bool:
        return bool({"llm_provider", "llm_base_url"} & set(self.changed_data) or self.cleaned_data.get("api_key")
                    or self.cleaned_data.get("clear_api_key"))

    def _check_model(self, cleaned: dict[str, Any]) -> None:
        """A new model id, or any model under a new provider, must be one the provider offers."""
        model = cleaned["answer_model"]
        unchanged = model == (self.initial.get("answer_model") or "")
        offline = self.candidate().get("PROVIDER") == LlmProvider.OFFLINE
        # An unchanged id is kept when only other fields change, or when switching off: answers ignore it then.
        if not model or (unchanged and (offline or not self._provider_changed())):
            return
        check = chat_model_check(model, self.candidate())
        if check.problem:
            self.add_error("answer_model", check.problem)
        elif check.warning:
            self.warnings.append(check.warning)

    def changes(self) -> dict[str, object]:
        """The settings fields to save (never the environment's, which the form only shows)."""
        names = [name for name in ("llm_provider", "llm_base_url", "answer_model")
                 if name in self.changed_data and not self.fields[name].disabled]
        changed: dict[str, object] = {name: self.cleaned_data[name] for name in names}
        if not self.env.wins and (self.cleaned_data.get("api_key") or self.cleaned_data.get("clear_api_key")):
            changed["llm_api_key"] = self.key_after_save()
        return changed
