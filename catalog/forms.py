"""Forms of the catalog admin: importing a Hugging Face config.json."""

from __future__ import annotations

from django import forms
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _

from .importers.hf_config import (
    MAX_CONFIG_BYTES,
    WEIGHT_FORMAT_BYTES,
    ConfigError,
    ImportedModel,
    load_config_text,
    parse_hf_config,
)
from .models import LlmModel

_JSON_TYPES = {"application/json", "text/json", "text/plain", "application/octet-stream", ""}


class HfConfigImportForm(forms.Form):
    """Upload or paste a config.json; the form parses it and keeps the derived model in ``imported``."""

    config_file = forms.FileField(
        label=_("config.json file"),
        required=False,
        help_text=_("JSON only, at most 1 MB."),
        widget=forms.ClearableFileInput(attrs={"accept": ".json,application/json"}),
    )
    config_text = forms.CharField(
        label=_("…or paste its text"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 12, "cols": 90, "spellcheck": "false"}),
        max_length=MAX_CONFIG_BYTES,
    )
    hf_model_id = forms.CharField(label=_("Hugging Face model id"), required=False, max_length=200)
    name = forms.CharField(label=_("Display name"), required=False, max_length=120)
    slug = forms.SlugField(
        label=_("Slug"), required=False, max_length=80, help_text=_("Derived from the name if empty.")
    )
    weight_format = forms.ChoiceField(
        label=_("Weight format"),
        required=False,
        choices=[("", _("as the config says"))] + [(k, k.upper()) for k in sorted(WEIGHT_FORMAT_BYTES)],
        help_text=_(
            "Force the format of the release you will serve (e.g. W4A8) when the config does not say."
        ),
    )
    update_existing = forms.BooleanField(
        label=_("Update the model with this slug if it exists"),
        required=False,
        help_text=_("Overwrites architecture and weight figures; prices, licence and vLLM flags stay."),
    )

    imported: ImportedModel | None = None

    def clean_config_file(self):
        upload = self.cleaned_data.get("config_file")
        if not upload:
            return None
        if upload.size > MAX_CONFIG_BYTES:
            raise forms.ValidationError(_("The file is larger than 1 MB."), code="too_large")
        name = (upload.name or "").lower()
        if not name.endswith(".json") or (getattr(upload, "content_type", "") or "") not in _JSON_TYPES:
            raise forms.ValidationError(_("Upload a .json file."), code="not_json")
        return upload

    def clean(self):
        cleaned = super().clean()
        upload = cleaned.get("config_file")
        text = cleaned.get("config_text") or ""
        if self.errors:
            return cleaned
        if bool(upload) == bool(text.strip()):
            raise forms.ValidationError(
                _("Give either a config.json file or its pasted text, not both or neither.")
            )
        target = "config_file" if upload else "config_text"
        raw = upload.read(MAX_CONFIG_BYTES + 1) if upload else text
        try:
            data = load_config_text(raw)
            self.imported = parse_hf_config(
                data,
                weight_format=cleaned.get("weight_format") or None,
                hf_model_id=cleaned.get("hf_model_id") or "",
                name=cleaned.get("name") or "",
            )
        except ConfigError as exc:
            self.add_error(target, str(exc))
            return cleaned
        slug = cleaned.get("slug") or slugify(self.imported.fields["name"])[:80]
        if not slug:
            self.add_error("slug", _("Give a slug: none could be derived."))
            return cleaned
        cleaned["slug"] = slug
        if LlmModel.objects.filter(slug=slug).exists() and not cleaned.get("update_existing"):
            self.add_error(
                "slug",
                _("An LLM with slug “%(slug)s” exists: choose another slug or tick “update”.")
                % {"slug": slug},
            )
        return cleaned
