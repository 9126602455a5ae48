"""Planning against the catalog, one concern per module (the package re-exports nothing):

* ``plans`` – resolve a request and plan it with its proven advice (``plan_from_json``): the page,
  the JSON API, ``manage.py plan`` and the quotes all plan through it, so every figure shown anywhere
  comes from the same ``plan()`` call; the smallest catalog deployment meeting a target out of reach;
  the launch bundle of a plan.
* ``proofs`` – a fix's proof, the plan of the request with it applied, kept per catalog version and day
  so the advice pass and the page's "Apply" buttons plan each fixed request once.
* ``prices`` – the price list a plan is priced from, the prices as a revision freezes them (one
  function), the price list's items as planned and the price basis the page states.
* ``quoting`` – what a quote revision freezes of a configuration (``plan_for_quote``).

Nothing here imports the web side (``configurator.web``): form data lives there.
"""
