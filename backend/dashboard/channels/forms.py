"""Forms of the channels pages: a new API key, and a widget id with its allowed origins one per line."""

from __future__ import annotations

from django import forms

from backend.widget.origins import canonical_patterns
from backend.widget.services import MAX_ALLOWED_ORIGINS

SCOPE_GURU = "guru"
SCOPE_ALL = "all"
MAX_ORIGIN_LINE = 300


class APIKeyForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Where the key is used, e.g. “CI docs bot”.")
    scope = forms.ChoiceField(
        label="Works for", choices=[(SCOPE_GURU, "Only this guru"), (SCOPE_ALL, "All the gurus I maintain")],
        initial=SCOPE_GURU, widget=forms.RadioSelect)
    rate_limit_per_minute = forms.IntegerField(
        label="Requests per minute", min_value=1, max_value=10_000, initial=60,
        help_text="Past this the API answers 429 with Retry-After.")


class WidgetIdForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text="For you only, e.g. “Docs site”.")
    allowed_origins = forms.CharField(
        required=False, max_length=MAX_ALLOWED_ORIGINS * (MAX_ORIGIN_LINE + 1),
        widget=forms.Textarea(attrs={"rows": 4, "spellcheck": "false", "autocapitalize": "off",
                                     "placeholder": "https://docs.example.com\nhttps://*.example.com"}),
        help_text="One per line: https://docs.example.com, https://*.example.com (subdomains), "
                  "http://localhost:* (any port). Pages of this OpenGuru server are always allowed.")
    rate_limit_per_minute = forms.IntegerField(
        label="Questions per minute (whole widget)", min_value=1, max_value=10_000, initial=120)
    per_ip_rate_limit_per_minute = forms.IntegerField(
        label="Questions per minute (per visitor IP)", min_value=1, max_value=1_000, initial=20)
    active = forms.BooleanField(required=False, initial=True,
                                help_text="Inactive widget ids refuse every request.")

    def clean_allowed_origins(self) -> list[str]:
        """Each non-empty line checked with the widget's own rules; every bad line reported by number."""
        lines = [(number, line.strip()) for number, line in
                 enumerate(self.cleaned_data["allowed_origins"].splitlines(), start=1) if line.strip()]
        if len(lines) > MAX_ALLOWED_ORIGINS:
            raise forms.ValidationError(f"At most {MAX_ALLOWED_ORIGINS} origins; use a *.example.com pattern "
                                        "to cover many subdomains.")
        too_long = {number for number, line in lines if len(line) > MAX_ORIGIN_LINE}
        cleaned, bad = canonical_patterns([line for _, line in lines])
        problems = [f"Line {number}: longer than {MAX_ORIGIN_LINE} characters." for number in sorted(too_long)]
        problems += [f"Line {lines[i][0]}: {why}" for i, why in bad if lines[i][0] not in too_long]
        if problems:
            raise forms.ValidationError(problems)
        return cleaned


def widget_form_initial(origins: list[str]) -> str:
    """The stored patterns as the textarea shows them."""
    return "\n".join(o for o in origins if isinstance(o, str))
