"""Checks of what a server and model can serve (engine/capability.py): image input, vLLM support of the accelerator."""

from ...types import Severity
from ..book import CheckDef, Fix, Variant

DEFS = (
    CheckDef(
        "model.text_only_server",
        "model",
        Severity.ERROR,
        "The workload needs image input, but {model_name} is validated on {server_name} for text only (served with --language-model-only, without the vision encoder): images would be refused.",
        "该业务需要图片输入，但 {model_name} 在 {server_name} 上仅验证了纯文本推理（以 --language-model-only 启动，不加载视觉编码器），图片请求会被拒绝。",
        field="server",
        fix=Fix(
            "Choose a server the model is validated on for image input, or drop the image input.",
            "请选用已验证支持图片输入的服务器，或取消图片输入需求。",
        ),
        source="vLLM vllm/config/multimodal.py language_model_only (the vision encoder is not loaded)",
    ),
    CheckDef(
        "hardware.vllm_unsupported",
        "hardware",
        Severity.ERROR,
        "vLLM does not run on {accelerator}. This server cannot serve the model with vLLM.",
        "vLLM 不支持 {accelerator}。该服务器无法用 vLLM 部署模型。",
        variants={
            "reason": Variant(
                "vLLM does not run on {accelerator}: {reason} This server cannot serve the model with vLLM.",
                "vLLM 不支持 {accelerator}：{reason}该服务器无法用 vLLM 部署模型。",
            )
        },
        field="server",
        fix=Fix(
            "Choose a server whose accelerator vLLM or vLLM-Ascend supports.",
            "请选用 vLLM 或 vLLM-Ascend 支持的加速卡服务器。",
        ),
        source='the catalog\'s vllm_support; docs.vllm.ai/projects/ascend FAQ "What devices are currently supported?"',
    ),
    CheckDef(
        "hardware.vllm_experimental",
        "hardware",
        Severity.WARNING,
        "vLLM support for {accelerator} is experimental: validate the deployment before quoting it.",
        "vLLM 对 {accelerator} 的支持为实验性，报价前请先实测验证。",
        variants={
            "reason": Variant(
                "vLLM support for {accelerator} is experimental ({reason}): validate the deployment before "
                "quoting it.",
                "vLLM 对 {accelerator} 的支持为实验性（{reason}），报价前请先实测验证。",
            )
        },
        field="server",
        source="the catalog's vllm_support (vLLM-Ascend marks Atlas 300I Duo experimental)",
    ),
)
