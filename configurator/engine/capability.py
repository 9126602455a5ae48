"""What a model can do on a server: capability checks every caller shares.

The configurator page, the JSON API, the auto-planner and the quotes all plan
through :func:`configurator.engine.plan.plan`, so a verdict such as "this
server serves this model as text only" holds everywhere, not only where one
caller remembered to check it.

* Image input on a server the model is validated on for text only (the
  catalog's "validated text-only on" list, or the server's own flag): vLLM is
  started there with ``--language-model-only``, which skips the vision encoder
  (vLLM ``vllm/config/multimodal.py``, ``language_model_only``, branch main),
  so images are refused.  An error: the deployment does not do what the
  workload needs.
* An accelerator vLLM does not run on (the catalog's ``vllm_support`` "none", e.g. a
  device outside vLLM-Ascend's list: docs.vllm.ai/projects/ascend FAQ "What devices are
  currently supported?") is refused with the catalog's reason; "experimental" support
  (vLLM-Ascend marks Atlas 300I Duo so) is a warning.
"""

from __future__ import annotations

from .checks import raise_
from .types import Check, PlanRequest


def text_only_here(req: PlanRequest) -> bool:
    """True when ``req.model`` is validated on ``req.server`` for text only."""
    return bool(req.server.validated_text_only or req.server.slug in req.model.text_only_servers)


def capability_checks(req: PlanRequest) -> list[Check]:
    """Checks of what the workload needs against what the model does on the server."""
    out: list[Check] = []
    model, server, workload = req.model, req.server, req.workload
    out.extend(vllm_support_checks(req))
    if workload.needs_vision and model.has_vision and text_only_here(req):
        out.append(raise_("model.text_only_server", model_name=model.name, server_name=server.name))
    return out


def vllm_support_checks(req: PlanRequest) -> list[Check]:
    """Refuse (or warn about) an accelerator vLLM does not support, with the catalog's reason."""
    acc = req.server.accelerator
    reason = acc.vllm_support_note.strip()
    figures = {"accelerator": acc.slug, "vllm_support": acc.vllm_support, "reason": reason}
    if acc.vllm_support in ("none", "experimental"):
        return [
            raise_(
                "hardware.vllm_unsupported" if acc.vllm_support == "none" else "hardware.vllm_experimental",
                variant="reason" if reason else None,
                figures=figures,
                accelerator=acc.name,
                reason=reason,
            )
        ]
    return []
