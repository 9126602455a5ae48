"""Pure-Python sizing engine: frozen dataclasses in, frozen dataclasses out.

Nothing in this package imports Django; ``configurator.port.inputs`` translates
catalog rows into :mod:`configurator.engine.types`.  ``plan()`` composes the
concern modules (layout, memory, power, racks, network, performance, tco,
launch) and returns a :class:`~configurator.engine.types.PlanResult`.
"""
