"""``manage.py calibrate``: refit the performance model with the promoted measurements and print the
new leave-one-source-out error; the bands beside every estimate follow (docs/performance.md §3).

Robust: a record the fit that never saw it predicts outside a quarter to four times (throughput, TTFT
or TPOT) is left out and printed; a promoted record that alone moves its family's band bound by more
than ``INFLUENCE_LIMIT`` is printed, so nobody absorbs it unseen; bands stay inside ``BAND_BOUNDS``.

The fit is written where the engine reads it (``PERFORMANCE_CALIBRATION_FILE`` or
``configurator/engine/calibration_fit.json``); ``--dry-run`` only prints.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand

from configurator.public import calibration as cal
from configurator.public import calibration_path
from quotes.benchmarks.promotion import promoted_records


class Command(BaseCommand):
    help = "Refit the serving-performance model (public records + promoted measurements) and print its error."

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="print the fit and its error; write nothing"
        )
        parser.add_argument("--output", default="", help="write the fit here instead of the engine's file")

    def handle(self, *args, **options):
        public = cal.load_records()
        promoted = promoted_records()
        records = public + promoted
        families, cv, left_out = cal.calibrate_robust(records)
        self.stdout.write(f"{len(public)} public records, {len(promoted)} promoted measurements")
        for record_id, why in sorted(left_out.items()):
            self.stdout.write(f"left out of the fit (implausible): {record_id}: {why}")
        promoted_ids = [str(r.get("id")) for r in promoted]
        for record_id, why in sorted(cal.influential(cv, promoted_ids).items()):
            self.stdout.write(
                f"moves its family's band by more than {cal.INFLUENCE_LIMIT} ×: {record_id}: {why}"
            )
        for name, f in families.items():
            note = " (fewer than three sources: widened)" if f.few_sources else ""
            self.stdout.write(
                f"{name:10} decode layer {f.layer_overhead_s * 1e6:.0f} µs  prefill layer {f.prefill_layer_overhead_s * 1e6:.0f} µs  "
                f"band {f.band_low:.2f}–{f.band_high:.2f}{note}"
            )
        self.stdout.write(cal.cv_table(cv))
        if options["dry_run"]:
            return
        path = Path(options["output"]) if options["output"] else calibration_path()
        cal.write_calibration(path, families)
        self.stdout.write(f"written to {path}")
