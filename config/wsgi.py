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

# The quote page says when PDFs would render slowly (documents/pdf/fonts.py): asking loads WeasyPrint's
# libraries (0.3–0.45 s of CPU, 20 MB that every worker holds once it has shown a quote), now rather than
# on the first quote page a worker serves.
from documents.pdf.fonts import check_font_subsetting  # noqa: E402

check_font_subsetting()

# The warm worker's long-lived heap leaves the collector's sight (config/heap.py).
from config.heap import settle_heap  # noqa: E402

settle_heap()
