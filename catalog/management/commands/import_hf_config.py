"""``manage.py import_hf_config PATH``: add (or update) an LLM from a Hugging Face config.json."""

from pathlib import Path

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from catalog.importers.hf_config import WEIGHT_FORMAT_BYTES, ConfigError, kv_bytes_per_token, load_config_text
from catalog.services import ImportConflict, parse_and_save_config


class Command(BaseCommand):
    help = "Derive an LLM's architecture, parameter counts and weight bytes from a config.json and save it."

    def add_arguments(self, parser):
        parser.add_argument("path", help="Path to config.json (at most 1 MB).")
        parser.add_argument("--slug", default="", help="Catalog slug (default: from the name).")
        parser.add_argument("--name", default="", help="Display name (default: from the model id or type).")
        parser.add_argument(
            "--hf-model-id", default="", help="Hugging Face model id, e.g. moonshotai/Kimi-K3."
        )
        parser.add_argument(
            "--weight-format",
            default="",
            choices=["", *sorted(WEIGHT_FORMAT_BYTES)],
            help="Force the weight format of the release you will serve.",
        )
        parser.add_argument("--update", action="store_true", help="Update the model if the slug exists.")

    def handle(self, *args, path, slug, name, hf_model_id, weight_format, update, **options):
        file = Path(path)
        try:
            raw = file.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror or exc}") from exc
        try:
            data = load_config_text(raw)
            if not slug:
                guess = (
                    name
                    or (hf_model_id.split("/")[-1] if hf_model_id else "")
                    or str(data.get("model_type", ""))
                )
                slug = slugify(guess)[:80]
            obj, created, imported = parse_and_save_config(
                data=data,
                slug=slug,
                name=name,
                hf_model_id=hf_model_id,
                weight_format=weight_format or None,
                update_existing=update,
            )
        except ConfigError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        except ImportConflict as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            raise CommandError(f"{path}: the derived model is not valid: {exc.message_dict}") from exc
        f = imported.fields
        self.stdout.write(
            f"{'created' if created else 'updated'} {obj.slug}: {f['num_layers']} layers "
            f"(GQA {f['gqa_layers']}, MLA {f['mla_layers']}, linear {f['linear_layers']}, "
            f"sliding {f['sliding_layers']}), {f['total_params']:,} total / {f['active_params']:,} active params, "
            f"{imported.weight_bytes:,} B of {f['weight_format']} weights, "
            f"{kv_bytes_per_token(f):,} B KV per token (BF16)"
        )
        for warning in imported.warnings:
            self.stdout.write(self.style.WARNING(warning))
