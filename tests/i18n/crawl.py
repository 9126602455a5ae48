"""The Chinese interface, page by page: every page an engineer, a manager and a customer reach,
rendered in zh-hans, its visible text read, and every Latin word that is not a product name, a
unit, a command or a flag reported (issue 31: raw "lingqu", English site/switch/rack names and
"WARNING" labels in the Chinese interface)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

#: Latin words a Chinese page may show: product and vendor names, units, protocols, model and
#: engine names, commands and their flags (docs/glossary.md keeps these in English).
# fmt: off
ALLOWED = {
    # vendors, products, models
    "Huawei", "Atlas", "Ascend", "NVIDIA", "HGX", "DGX", "Inspur", "NF5868G8", "NF5688", "RTX", "PRO", "Server",
    "Kimi", "K3", "K2", "DeepSeek", "Qwen", "Qwen3", "GLM", "MiniMax", "Llama", "gpt", "oss", "Thinking",
    "LingQu", "RoCE", "InfiniBand", "Spectrum", "CloudEngine", "OceanStor", "openEuler", "Kylin", "CANN",
    "vLLM", "vllm", "MindIE", "Mooncake", "Xinchuang", "H3C", "Dell", "Lenovo", "Supermicro",
    "Blackwell", "Hopper", "AMD", "Instinct", "OpenAI", "API", "HF", "Hugging", "Face",
    "SN5600", "X400", "MXFP4", "MXFP8", "FP8", "FP4", "BF16", "INT8", "W8A8", "W4A8", "AWQ", "GPTQ", "MLA", "MoE",
    "MTP", "EP", "TP", "DP", "PP", "KV", "GPU", "NPU", "CPU", "PCIe", "NVLink", "HCCS", "UB", "HBM", "DDR",
    "SSD", "NVMe", "PDU", "PSU", "UPS", "BTU", "RDMA", "NIC", "NICs", "GE", "OSFP", "QSFP", "DAC", "AOC", "AEC",
    "TTFT", "TPOT", "ITL", "SLA", "TCO", "NPV", "IRR", "BOM", "SKU", "VAT", "CNY", "USD", "EUR", "RMB",
    "PDF", "XLSX", "CSV", "JSON", "YAML", "URL", "SVG", "ID", "IP", "DNS", "HTTP", "HTTPS", "SSH", "OS",
    "xPyD", "P", "D", "A", "B", "A2", "A3", "C", "N", "M", "K", "G", "T", "U", "V", "W", "S", "H", "x",
    "docker", "Docker", "Kubernetes", "LWS", "LeaderWorkerSet", "nginx", "keepalived", "Prometheus",
    "Grafana", "Redis", "PostgreSQL", "Celery", "Django", "htmx", "vLLM-Ascend", "ModelSlim", "SXM", "OAM",
    "Agent", "PUE", "N+N", "zip", "ZIP", "English", "bench", "serve", "QSFP-DD", "rank", "ranks",
    "Eager", "GQA", "PyTorch", "logit", "Top-k", "DSpark", "EAGLE", "EAGLE-3", "N-gram", "Suffix",
    "PowerEdge", "UniServer", "UBB", "ProLiant", "ThinkSystem", "BMC", "Dorado", "LTS", "NAS", "NFS", "SP4",
    # units
    "kW", "kWh", "MW", "Hz", "GB", "GiB", "TB", "TiB", "MB", "MiB", "Gb", "Gbps", "Gb/s",
    "TFLOPS", "PFLOPS", "tok", "tokens", "Token", "token", "ms", "s", "mm", "kg", "m", "km",
    "min", "h", "AC", "DC", "PF", "kVA",
}
# fmt: on

# vLLM flags and commands, shown as typed
_FLAG = re.compile(r"^--?[a-z0-9][a-z0-9-]*$")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_./+-]*")


class _Text(HTMLParser):
    """The text a reader sees: no <script>/<style>/<code>/<pre>/<kbd>/<samp>, no hidden inputs;
    an element with ``translate="no"`` or class ``mono`` is a literal (commands, flags, paths)."""

    SKIP = {"script", "style", "code", "pre", "kbd", "samp", "svg", "textarea", "template"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("input", "br", "img", "meta", "link", "hr", "wbr", "source", "col"):
            if tag == "input" and a.get("type") in ("submit", "button") and a.get("value"):
                self.parts.append(a["value"])
            return
        literal = tag in self.SKIP or a.get("translate") == "no" or "mono" in (a.get("class") or "").split()
        self.stack.append(literal or (self.stack[-1] if self.stack else False))
        for name in ("title", "placeholder", "aria-label"):
            if a.get(name) and not self.stack[-1]:
                self.parts.append(a[name])

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]):
            self.parts.append(data)


def visible_text(html: str) -> str:
    parser = _Text()
    parser.feed(html)
    return " ".join(parser.parts)


_FLAGS_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])--?[a-z][a-z0-9-]*")
_FILE = re.compile(r"^[\w-]+\.(sh|py|json|yaml|yml|zip|pdf|xlsx|csv|txt|md)$")
_PLACEHOLDER = re.compile(r"^[A-Z][A-Z0-9_]*__$")  # a launch field's placeholder (DATA_NIC__)
_IDENTIFIER = re.compile(r"^[a-z][a-z0-9]*(_[a-z0-9]+)+$")  # vLLM parameters (max_num_seqs)


def latin_words(text: str, allowed: set[str] = ALLOWED) -> list[str]:
    """Latin words in ``text`` that a Chinese reader should not meet (sorted, unique): not a product
    name, unit or abbreviation (``ALLOWED``), a command-line flag (--enforce-eager) or a parameter
    name (max_num_seqs), a model or part number, or a path."""
    found = set()
    for word in _WORD.findall(_FLAGS_IN_TEXT.sub(" ", text)):
        w = word.strip("./+-")
        if not w or _FLAG.match(word) or w in allowed or w.lower() in {a.lower() for a in allowed}:
            continue
        if any(ch.isdigit() for ch in w):  # model numbers, part numbers, sizes (8P8D, 910C, 400GE)
            continue
        if "/" in w or _IDENTIFIER.match(w) or _FILE.match(w) or _PLACEHOLDER.match(w):
            continue  # paths, units per second (tokens/s), parameters, file names, placeholders
        if len(w) <= 2 and w.isupper():  # short abbreviations (KV, TP, …) and plane letters
            continue
        found.add(w)
    return sorted(found)
