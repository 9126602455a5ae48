"""``manage.py plan REQUEST.json``: print the plan as JSON (the /api/plan response)."""

import json
import sys

from django.core.management.base import BaseCommand, CommandError

from catalog import jsonlimits
from configurator.io.requests import RequestError
from configurator.planning import plans


class Command(BaseCommand):
    help = "Size a deployment from a plan request (JSON file, or - for standard input) and print the result."

    def add_arguments(self, parser):
        parser.add_argument("request", help="path to the request JSON, or - for standard input")
        parser.add_argument("--indent", type=int, default=2)

    def handle(self, *args, request, indent, **options):
        try:
            text = sys.stdin.read() if request == "-" else open(request, encoding="utf-8").read()
        except OSError as exc:
            raise CommandError(f"cannot read {request}: {exc.strerror}") from exc
        try:
            data = jsonlimits.loads(text, what=request)
        except jsonlimits.JsonLimitError as exc:
            raise CommandError(str(exc)) from exc
        try:
            _, result = plans.plan_from_json(data)
        except RequestError as exc:
            lines = [f"  {field}: {' '.join(msgs)}" for field, msgs in exc.errors.items()]
            raise CommandError("the request has errors:\n" + "\n".join(lines)) from exc
        self.stdout.write(json.dumps(plans.plan_response(result), indent=indent, ensure_ascii=False))
