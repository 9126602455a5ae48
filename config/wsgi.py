"""
WSGI config for config project.

It exposes the WSGI callable as a module-level variable named ``application``.

For more information on this file, see
https://docs.djangoproject.com/en/5.2/howto/deployment/wsgi/
"""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

application = get_wsgi_application()

# Compile the configurator's templates now, not on the first engineer's request.
from configurator.warmup import warm_up  # noqa: E402

warm_up()

# The warm worker's long-lived heap leaves the collector's sight (config/heap.py).
from config.heap import settle_heap  # noqa: E402

settle_heap()
