"""The configurator's pages: ``views``, ``forms`` and ``presentation`` (a plan as the page shows
it); ``planner/`` holds the auto-planner's pages."""
