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

from .explain import check
from .types import Check, PlanRequest, Severity

AREA = "model"


def text_only_here(req: PlanRequest) -> bool:
    """True when ``req.model`` is validated on ``req.server`` for text only."""
    return bool(req.server.validated_text_only or req.server.slug in req.model.text_only_servers)


def capability_checks(req: PlanRequest) -> list[Check]:
    """Checks of what the workload needs against what the model does on the server."""
    out: list[Check] = []
    model, server, workload = req.model, req.server, req.workload
    out.extend(vllm_support_checks(req))
    if workload.needs_vision and model.has_vision and text_only_here(req):
        out.append(
            check(
                "model.text_only_server",
                Severity.ERROR,
                AREA,
                f"The workload needs image input, but {model.name} is validated on {server.name} for text only "
                "(served with --language-model-only, without the vision encoder): images would be refused.",
                f"该业务需要图片输入，但 {model.name} 在 {server.name} 上仅验证了纯文本推理"
                "（以 --language-model-only 启动，不加载视觉编码器），图片请求会被拒绝。",
                field="server",
                fix_en="Choose a server the model is validated on for image input, or drop the image input.",
                fix_zh="请选用已验证支持图片输入的服务器，或取消图片输入需求。",
            )
        )
    return out


def vllm_support_checks(req: PlanRequest) -> list[Check]:
    """Refuse (or warn about) an accelerator vLLM does not support, with the catalog's reason."""
    acc = req.server.accelerator
    reason = acc.vllm_support_note.strip()
    if acc.vllm_support == "none":
        because_en = f": {reason}" if reason else "."
        because_zh = f"：{reason}" if reason else "。"
        return [
            check(
                "hardware.vllm_unsupported",
                Severity.ERROR,
                "hardware",
                f"vLLM does not run on {acc.name}{because_en} This server cannot serve the model with vLLM.",
                f"vLLM 不支持 {acc.name}{because_zh}该服务器无法用 vLLM 部署模型。",
                field="server",
                figures={"accelerator": acc.slug, "vllm_support": acc.vllm_support, "reason": reason},
                fix_en="Choose a server whose accelerator vLLM or vLLM-Ascend supports.",
                fix_zh="请选用 vLLM 或 vLLM-Ascend 支持的加速卡服务器。",
            )
        ]
    if acc.vllm_support == "experimental":
        because_en = f" ({reason})" if reason else ""
        because_zh = f"（{reason}）" if reason else ""
        return [
            check(
                "hardware.vllm_experimental",
                Severity.WARNING,
                "hardware",
                f"vLLM support for {acc.name} is experimental{because_en}: validate the deployment before quoting it.",
                f"vLLM 对 {acc.name} 的支持为实验性{because_zh}，报价前请先实测验证。",
                field="server",
                figures={"accelerator": acc.slug, "vllm_support": acc.vllm_support, "reason": reason},
            )
        ]
    return []
