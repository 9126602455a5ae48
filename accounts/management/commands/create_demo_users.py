from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from accounts.services import demo_users_create


class Command(BaseCommand):
    help = "Create the role groups and one demo user per role (embedded mode only)."

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="allow in production (not recommended)")

    def handle(self, *args, force=False, **options):
        if settings.PRODUCTION and not force:
            raise CommandError("Demo users are not created in production (pass --force to override).")
        results = demo_users_create()
        created = [demo for demo, was_created in results if was_created]
        if created:
            self.stdout.write("Demo log-ins (printed once, when created):")
            for demo in created:
                self.stdout.write(f"  {demo.username:<10} / {demo.password:<22} {demo.display_name}")
        else:
            self.stdout.write("Demo users already exist (log-ins are listed in README.md).")
