"""The configurator's JSON API: ``views`` (``POST /api/plan``, ``/api/recommend``), ``urls``, and
``base`` (authentication, methods, body limits and error mapping every JSON endpoint shares)."""
