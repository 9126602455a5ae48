"""Admin for LLMs, including the “Import from config.json” page."""

from __future__ import annotations

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.translation import gettext_lazy as _

from configurator.engine.formatting import format_bytes_gb, format_number

from ..forms import HfConfigImportForm
from ..importers.hf_config import SUPPORTED_MODEL_TYPES, kv_bytes_per_token
from ..models import Checkpoint, LlmModel, SpeculativeDraft
from ..services import ImportConflict, llm_model_save_import
from . import resources
from .base import CatalogAdmin, preview_link


def _gb(n: int) -> str:
    return format_bytes_gb(n, 1)


def _billions(n: int) -> str:
    return f"{format_number(n / 10**9, 2)} B"


@admin.register(LlmModel)
class LlmModelAdmin(CatalogAdmin):
    resource_classes = [resources.LlmModelResource]
    change_list_template = "admin/catalog/llmmodel/change_list.html"
    list_display = (
        "name",
        "family",
        "total_col",
        "active_col",
        "num_layers",
        "layers_col",
        "weights_col",
        "kv_col",
        "weight_format",
        "has_vision",
        "is_active",
        "assumed_count",
        "seed_status",
        "preview_col",
    )

    @admin.display(description=_("preview"))
    def preview_col(self, obj):
        return preview_link("model", obj.slug)

    list_filter = ("family", "recipe_family", "weight_format", "has_vision", "is_active")
    search_fields = ("name", "slug", "family", "hf_model_id")
    filter_horizontal = ("validated_text_only_on",)
    prepopulated_fields = {"slug": ("name",)}
    fieldsets = (
        (None, {"fields": ("slug", "name", "family", "hf_model_id", "is_active")}),
        (
            _("Size"),
            {
                "fields": (
                    "total_params",
                    "active_params",
                    "num_layers",
                    "hidden_size",
                    "vocab_size",
                    "max_context",
                )
            },
        ),
        (
            _("Attention"),
            {
                "fields": (
                    ("num_attention_heads", "num_kv_heads", "head_dim"),
                    ("gqa_layers", "mla_layers", "linear_layers", "sliding_layers"),
                    "sliding_window",
                    ("kv_lora_rank", "qk_rope_head_dim", "index_head_dim"),
                    ("index_topk", "index_n_heads"),
                    ("linear_num_heads", "linear_head_dim"),
                    ("linear_conv_kernel", "linear_conv_dim"),
                    ("linear_state_dtype_bytes", "linear_conv_dtype_bytes"),
                )
            },
        ),
        (
            _("Experts and weights"),
            {
                "fields": (
                    ("num_experts", "experts_per_token", "shared_experts", "moe_layers"),
                    ("expert_weight_bytes", "non_expert_weight_bytes"),
                    ("weight_format", "activation_format"),
                    "tie_word_embeddings",
                )
            },
        ),
        (_("Vision"), {"fields": ("has_vision", "vision_params", "vision_bytes")}),
        (
            _("Serving and commercial"),
            {
                "fields": (
                    (
                        "api_price_input_per_m",
                        "api_price_output_per_m",
                        "api_price_cached_input_per_m",
                        "api_price_currency",
                    ),
                    "licence_note",
                    "recipe_family",
                    ("vllm_tokenizer_mode", "vllm_reasoning_parser", "vllm_tool_call_parser"),
                    "validated_text_only_on",
                    "source_notes",
                )
            },
        ),
    )

    @admin.display(description=_("total"), ordering="total_params")
    def total_col(self, obj):
        return _billions(obj.total_params)

    @admin.display(description=_("active"), ordering="active_params")
    def active_col(self, obj):
        return _billions(obj.active_params)

    @admin.display(description=_("layers by type"))
    def layers_col(self, obj):
        parts = []
        for label, n in (
            ("GQA", obj.gqa_layers),
            ("MLA", obj.mla_layers),
            ("linear", obj.linear_layers),
            ("SWA", obj.sliding_layers),
        ):
            if n:
                parts.append(f"{n} {label}")
        return " + ".join(parts)

    @admin.display(description=_("weights"))
    def weights_col(self, obj):
        return _gb(obj.weight_bytes)

    @admin.display(description=_("KV / token (BF16)"))
    def kv_col(self, obj):
        return f"{format_number(obj.kv_bytes_per_token_bf16)} B"

    # ---------------------------------------------------------------- importer page

    def get_urls(self):
        urls = [
            path(
                "import-hf-config/",
                self.admin_site.admin_view(self.import_hf_config_view),
                name="catalog_llmmodel_import_hf_config",
            )
        ]
        return urls + super().get_urls()

    def import_hf_config_view(self, request):
        if not self.has_add_permission(request):
            raise PermissionDenied
        form = HfConfigImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            if form.cleaned_data.get("update_existing") and not self.has_change_permission(request):
                raise PermissionDenied
            imported = form.imported
            try:
                obj, created = llm_model_save_import(
                    imported=imported,
                    slug=form.cleaned_data["slug"],
                    name=form.cleaned_data.get("name") or "",
                    update_existing=bool(form.cleaned_data.get("update_existing")),
                )
            except ImportConflict as exc:
                form.add_error("slug", str(exc))
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    form.add_error(None, f"{field}: {' '.join(errors)}")
            else:
                f = imported.fields
                self.message_user(
                    request,
                    _(
                        "%(verb)s “%(name)s”: %(layers)s layers (%(types)s), %(total)s total / %(active)s active "
                        "parameters, %(weights)s of %(format)s weights, %(kv)s B of KV per token (BF16)."
                    )
                    % {
                        "verb": _("Created") if created else _("Updated"),
                        "name": obj.name,
                        "layers": f["num_layers"],
                        "types": self.layers_col(obj),
                        "total": _billions(f["total_params"]),
                        "active": _billions(f["active_params"]),
                        "weights": _gb(imported.weight_bytes),
                        "format": f["weight_format"].upper(),
                        "kv": f"{kv_bytes_per_token(f):,}",
                    },
                    messages.SUCCESS,
                )
                for warning in imported.warnings:
                    self.message_user(request, warning, messages.WARNING)
                return redirect(reverse("admin:catalog_llmmodel_change", args=[obj.pk]))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": _("Import an LLM from config.json"),
            "form": form,
            "supported_types": ", ".join(SUPPORTED_MODEL_TYPES),
            "has_view_permission": self.has_view_permission(request),
        }
        return TemplateResponse(request, "admin/catalog/llmmodel/import_hf_config.html", context)


@admin.register(Checkpoint)
class CheckpointAdmin(CatalogAdmin):
    """Checkpoints: what a deployment loads, with bytes per part, platforms and launch flags."""

    resource_classes = [resources.CheckpointResource]
    list_display = ("name", "model", "total_col", "weight_format", "quant_method", "platforms", "default_for")
    list_filter = ("model", "weight_format", "quant_method")
    search_fields = ("name", "slug", "hf_repo")
    prepopulated_fields = {"slug": ("name",)}
    fieldsets = (
        (None, {"fields": ("model", "slug", "name", "hf_repo", "architecture", "notes")}),
        (
            _("Bytes on disk"),
            {"fields": ("expert_bytes", "non_expert_bytes", "embedding_bytes", "vision_bytes")},
        ),
        (
            _("Formats"),
            {"fields": ("weight_format", "non_expert_format", "activation_format", "quant_method")},
        ),
        (
            _("Platforms and launch"),
            {"fields": ("platforms", "default_for", "launch_flags", "param_groups", "group_formats")},
        ),
    )

    @admin.display(description=_("size"))
    def total_col(self, obj: Checkpoint) -> str:
        return _gb(obj.total_bytes)


@admin.register(SpeculativeDraft)
class SpeculativeDraftAdmin(CatalogAdmin):
    """Speculative drafts: the MTP heads and draft models a model is served with, and their acceptance."""

    resource_classes = [resources.SpeculativeDraftResource]
    list_display = (
        "name",
        "target",
        "method",
        "num_layers",
        "num_speculative_tokens",
        "acceptance_rate",
        "platforms",
    )
    list_filter = ("target", "method")
    search_fields = ("name", "slug", "hf_repo")
    prepopulated_fields = {"slug": ("name",)}
    fieldsets = (
        (None, {"fields": ("target", "slug", "name", "method", "hf_repo", "notes")}),
        (
            _("Weights and layers"),
            {"fields": ("parameters", "weight_bytes", "num_layers", "num_kv_heads", "head_dim")},
        ),
        (_("Published acceptance"), {"fields": ("num_speculative_tokens", "acceptance_rate")}),
        (_("Platforms and versions"), {"fields": ("platforms", "min_versions", "eager_on")}),
    )
