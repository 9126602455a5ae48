"""``manage.py launch-bundle REQUEST.json OUT.zip``: write the per-node launch bundle."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from catalog import jsonlimits
from configurator.io.requests import RequestError
from configurator.planning import plans


class Command(BaseCommand):
    help = "Write the launch bundle (per-node scripts, proxy/gateway, Prometheus, README) of a plan request."

    def add_arguments(self, parser):
        parser.add_argument("request", help="path to the plan request JSON")
        parser.add_argument("out", help="path of the .zip to write")

    def handle(self, *args, request, out, **options):
        try:
            data = jsonlimits.loads(Path(request).read_bytes(), what=request)
        except OSError as exc:
            raise CommandError(f"cannot read {request}: {exc.strerror}") from exc
        except jsonlimits.JsonLimitError as exc:
            raise CommandError(str(exc)) from exc
        try:
            plan_request, result = plans.plan_from_json(data)
        except RequestError as exc:
            lines = [f"  {field}: {' '.join(msgs)}" for field, msgs in exc.errors.items()]
            raise CommandError("the request has errors:\n" + "\n".join(lines)) from exc
        payload, _ = plans.launch_bundle(plan_request, result)
        if payload is None:
            errors = [c.message_en for c in result.checks if c.severity.value == "error"]
            raise CommandError("the plan has errors, no bundle written:\n  " + "\n  ".join(errors))
        Path(out).write_bytes(payload)
        self.stdout.write(f"wrote {out} ({len(payload):,} bytes)")
