"""``manage.py recommend REQUEST.json``: print the auto-planner's result as JSON (the /api/recommend response)."""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from catalog import jsonlimits
from configurator.io.requests import RequestError
from configurator.web.planner import services as planner_services


class Command(BaseCommand):
    help = (
        "Search every server in the catalog for the cheapest deployments that meet a planner request "
        "(JSON file, or - for standard input; docs/planner.md) and print the result."
    )

    def add_arguments(self, parser):
        parser.add_argument("request", help="path to the planner request JSON, or - for standard input")
        parser.add_argument("--indent", type=int, default=2)
        parser.add_argument(
            "--no-evaluated",
            action="store_true",
            help="leave out the list of every shape the search evaluated",
        )

    def handle(self, *args, request, indent, no_evaluated, **options):
        try:
            text = sys.stdin.read() if request == "-" else open(request, encoding="utf-8").read()
        except OSError as exc:
            raise CommandError(f"cannot read {request}: {exc.strerror}") from exc
        try:
            data = jsonlimits.loads(text, what=request)
        except jsonlimits.JsonLimitError as exc:
            raise CommandError(str(exc)) from exc
        try:
            out = planner_services.recommend(data)
        except RequestError as exc:
            lines = [f"  {field}: {' '.join(msgs)}" for field, msgs in exc.errors.items()]
            raise CommandError("the request has errors:\n" + "\n".join(lines)) from exc
        if no_evaluated:
            out.pop("evaluated", None)
        self.stdout.write(json.dumps(out, indent=indent, ensure_ascii=False))
