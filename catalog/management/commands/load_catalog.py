"""``manage.py load_catalog``: load the seeded catalog (idempotent, keeps admin edits)."""

from django.core.management.base import BaseCommand

from catalog.services import load_catalog_seed


class Command(BaseCommand):
    help = (
        "Load the seeded catalog (models, hardware, sites, prices, scenarios, topologies). "
        "Safe to run repeatedly: rows an admin edited since the last load are left alone and listed."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="Report what would change, then roll back."
        )

    def handle(self, *args, dry_run: bool = False, **options):
        verbose = options.get("verbosity", 1)

        def log(line: str) -> None:
            if line.startswith("skipped"):
                self.stdout.write(self.style.WARNING(line))
            elif verbose >= 1:
                self.stdout.write(line)

        load_catalog_seed(dry_run=dry_run, log=log)
