"""Forms for adding each kind of data source and for acting on a selection of sources."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.urls import reverse
from django.utils.html import format_html

from backend.core.errors import AppError
from backend.gurus.models import Guru
from backend.pipeline.youtube_urls import parse_youtube_url
from backend.sources.models import SourceKind
from backend.sources.selectors import MAX_ID
from backend.sources.validation import AlreadyASource

MAX_URL_LENGTH = 2000
MAX_FILES = 20
MAX_GLOBS = 100
MAX_GLOB_LENGTH = 500
MAX_SELECTION = 1000
WEBSITE_MODE_CHOICES = [
    ("page", "Single page: only this URL"),
    ("sitemap", "Sitemap: every page the sitemap lists"),
    ("crawl", "Crawl: follow links under this URL on the same site"),
]


class SourceForm(forms.Form):
    """Base of the add forms: the kind they create and the service arguments they produce."""

    kind: str = ""
    private = forms.BooleanField(required=False, label="Private",
                                 help_text="Answers use it but never link to it.")

    def source_arguments(self) -> dict[str, Any]:
        return {"kind": self.kind, "url": self.cleaned_data.get("url", ""), "private": self.cleaned_data["private"]}

    def add_service_error(self, exc: AppError, *, guru: Guru) -> None:
        """Show why the service refused the source under the URL field; an existing source is linked."""
        if isinstance(exc, AlreadyASource):
            link = reverse("dashboard:source", kwargs={"slug": guru.slug, "source_id": exc.source.pk})
            self.add_error("url", forms.ValidationError(
                format_html('{} <a href="{}">Open it</a>.', exc.detail, link), code="already_a_source"))
        else:
            self.add_error("url", exc.detail)


class YouTubeForm(SourceForm):
    kind = SourceKind.YOUTUBE
    url = forms.CharField(label="YouTube video or playlist URL", max_length=MAX_URL_LENGTH,
                          widget=forms.URLInput(attrs={"placeholder": "https://www.youtube.com/watch?v=…"}),
                          help_text="A playlist link indexes every video of the playlist that has captions.")

    field_order = ["url", "private"]

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"].strip()
        try:
            parse_youtube_url(url)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from exc
        return url


class WebsiteForm(SourceForm):
    kind = SourceKind.WEBSITE
    url = forms.URLField(label="Website URL", max_length=MAX_URL_LENGTH, assume_scheme="https",
                         widget=forms.URLInput(attrs={"placeholder": "https://docs.example.com/guide/"}))
    mode = forms.ChoiceField(choices=WEBSITE_MODE_CHOICES, initial="page", widget=forms.RadioSelect)

    field_order = ["url", "mode", "max_pages", "depth", "private"]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Built per instance: the caps are settings, and limits above them would be silently lowered.
        self.fields["max_pages"] = forms.IntegerField(
            required=False, min_value=1, max_value=settings.OPENGURU_CRAWL_MAX_PAGES, label="Max pages",
            help_text="Sitemap and crawl only; empty for the instance limit.")
        self.fields["depth"] = forms.IntegerField(
            required=False, min_value=1, max_value=settings.OPENGURU_CRAWL_MAX_DEPTH, label="Max link depth",
            help_text="Crawl only; empty for the instance limit.")
        self.order_fields(self.field_order)

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        if not url.lower().startswith(("http://", "https://")):  # URLField also lets ftp:// through
            raise forms.ValidationError("Give an http:// or https:// address.")
        return url

    def source_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        options: dict[str, Any] = {"mode": data["mode"]}
        if data["mode"] != "page":
            options.update({k: data[k] for k in ("max_pages", "depth") if data.get(k)})
        return {**super().source_arguments(), "options": options}


def _globs(text: str, field: str) -> list[str]:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if len(lines) > MAX_GLOBS:
        raise forms.ValidationError(f"At most {MAX_GLOBS} {field} patterns.")
    if any(len(line) > MAX_GLOB_LENGTH for line in lines):
        raise forms.ValidationError(f"A pattern may be at most {MAX_GLOB_LENGTH} characters long.")
    return lines


class GithubForm(SourceForm):
    kind = SourceKind.GITHUB_REPO
    url = forms.CharField(
        label="Repository URL", max_length=MAX_URL_LENGTH,
        widget=forms.TextInput(attrs={"placeholder": "https://gitlab.com/group/project.git", "inputmode": "url",
                                      "autocomplete": "off", "spellcheck": "false"}),
        help_text="The https:// clone URL on any host: GitHub, GitLab, Gitea/Forgejo, Bitbucket or your own "
                  "server. http:// and git:// work for hosts in OPENGURU_FETCH_ALLOWLIST; staff can give a path on "
                  "the server when OPENGURU_GIT_ALLOW_FILE_URLS is on. It is checked when you add it.")
    branch = forms.CharField(required=False, max_length=255, help_text="Empty for the default branch.")
    include = forms.CharField(required=False, label="Include globs", max_length=MAX_GLOBS * (MAX_GLOB_LENGTH + 1),
                              widget=forms.Textarea(attrs={"rows": 2, "placeholder": "docs/**\n*.md"}),
                              help_text="One pattern per line; empty indexes every text file.")
    exclude = forms.CharField(required=False, label="Exclude globs", max_length=MAX_GLOBS * (MAX_GLOB_LENGTH + 1),
                              widget=forms.Textarea(attrs={"rows": 2, "placeholder": "tests/**"}),
                              help_text="One pattern per line.")
    # Never rendered back into the page: a re-shown form asks for the token again.
    token = forms.CharField(required=False, max_length=500, label="Access token",
                            widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
                            help_text="Only for private repositories (sent over https only); stored encrypted. "
                                      "Give user:token where the host needs your user name.")

    field_order = ["url", "branch", "include", "exclude", "token", "private"]

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"].strip()
        if not url.lower().startswith(("https://", "http://", "git://", "file://", "/")):
            raise forms.ValidationError("Give the repository's clone URL, e.g. https://gitlab.com/group/project.git "
                                        "(SSH remotes are not supported).")
        return url

    def clean_include(self) -> list[str]:
        return _globs(self.cleaned_data["include"], "include")

    def clean_exclude(self) -> list[str]:
        return _globs(self.cleaned_data["exclude"], "exclude")

    def source_arguments(self) -> dict[str, Any]:
        data = self.cleaned_data
        options = {k: data[k] for k in ("branch", "include", "exclude") if data.get(k)}
        return {**super().source_arguments(), "options": options, "access_token": data["token"].strip()}


class MultipleFileInput(forms.FileInput):
    allow_multiple_selected = True


class MultiplePdfField(forms.Field):
    """The uploaded files as a list; each file is checked on its own later, so one bad file fails alone."""

    widget = MultipleFileInput

    def clean(self, value: Any) -> list[UploadedFile]:
        files = [f for f in (value or []) if f]
        if not files:
            raise forms.ValidationError("Choose at least one PDF file.", code="required")
        if len(files) > MAX_FILES:
            raise forms.ValidationError(f"Upload at most {MAX_FILES} files at a time.")
        return files


class PdfUploadForm(SourceForm):
    kind = SourceKind.PDF
    # Django's form metaclass moves declared fields into base_fields, so this never shadows BaseForm.files (the
    # uploaded files); the stubs cannot model that.
    files = MultiplePdfField(  # type: ignore[assignment]
        label="PDF files", widget=MultipleFileInput(attrs={"accept": "application/pdf,.pdf"}))

    field_order = ["files", "private"]


class IdsField(forms.Field):
    """Repeated `ids` values as integers; whether they are the guru's sources is checked by source_pick."""

    widget = forms.MultipleHiddenInput
    default_error_messages = {"required": "Select at least one source.", "invalid": "That selection is not valid."}

    def to_python(self, value: Any) -> list[int]:
        values = list(value or [])
        if len(values) > MAX_SELECTION:
            raise forms.ValidationError(f"Select at most {MAX_SELECTION} sources at a time.")
        if not all(str(v).isdigit() and 0 < int(v) <= MAX_ID for v in values):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return list(dict.fromkeys(int(v) for v in values))


class SelectionForm(forms.Form):
    """The ids of the rows ticked in the table."""

    ids = IdsField()
