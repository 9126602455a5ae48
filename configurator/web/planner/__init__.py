"""The auto-planner's pages: ``views``, ``forms``, ``presentation``, ``urls`` and ``services`` (the
Django catalog port of ``configurator/planner/``, the pure search)."""
