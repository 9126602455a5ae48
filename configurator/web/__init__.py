"""The configurator's pages: ``views``, ``forms``, ``presets`` (a fresh page's and a scenario's form
data, and what differs from them), ``form_data`` (a saved request as form data), ``fixes`` (the fixes
the page offers, proven) and ``presentation`` (a plan as the page shows it); ``planner/`` holds the
auto-planner's pages."""
