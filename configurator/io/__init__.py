"""The configurator's input and output boundary: request parsing and validation (:mod:`.requests`,
the one place a JSON, form or CLI request becomes an engine request) and the JSON Schemas of the
plan request and response generated from the engine types (:mod:`.schema`)."""
