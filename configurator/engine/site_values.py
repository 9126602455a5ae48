"""The grammar of every site value that reaches a generated file (issue 13).

One place says what a node address, a NIC name, a model path, a container
image, a served-model name or a port may look like.  The request boundary
(``configurator.io.requests.resolve``: the form, every JSON endpoint and the CLI
pass through it) turns a value that fails these rules into a 400 naming the
field; the launch bundle (``engine/launch/``) checks them again and never
writes a value that fails them, so a stored plan made before these rules
cannot smuggle a line into a script either.

Each rule is narrower than what the consuming program accepts, never wider:

* node address: an IPv4 literal (dotted quad, no leading zeros, as
  ``ipaddress.IPv4Address`` parses it), an IPv6 literal without a zone id
  (``%eth0`` would carry free text), or an RFC 1123 host name (labels of
  letters, digits and inner hyphens, 1–63 characters, ≤ 253 in all, last label
  not all digits so ``999.1.1.1`` is not read as a name);
* NIC name: Linux ``dev_valid_name()`` (torvalds/linux master,
  net/core/dev.c): 1–15 characters (IFNAMSIZ 16 with the NUL), not ``.`` or
  ``..``, no ``/``, ``:`` or whitespace; we further keep to letters, digits,
  ``_ . - @`` with a letter or digit first (udev and ``ip link`` names never
  need more);
* model path: an absolute path of letters, digits and ``_ . - + @ = , /``;
* container image: the reference grammar of distribution/reference
  (github.com/distribution/reference, main, regexp.go):
  ``[domain[:port]/]path[:tag][@digest]``;
* served-model name: letters, digits and ``_ . - : / @ +`` (what Hugging Face
  repo ids and vLLM's ``--served-model-name`` examples use), starting with a
  letter or digit so argparse never reads it as an option;
* port: a whole number 1–65535.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata

# --------------------------------------------------------------------------- addresses

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\.?", re.ASCII)
_PLACEHOLDER = re.compile(r"__[A-Z0-9][A-Z0-9_]*__", re.ASCII)


def ip_literal(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address if ``text`` is an IPv4/IPv6 literal (no zone id), else None."""
    if not isinstance(text, str) or "%" in text or not text.isascii():
        return None
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def is_hostname(text: str) -> bool:
    """RFC 1123 host name (not an IP literal)."""
    if not isinstance(text, str) or len(text) > 253 or not _HOSTNAME.fullmatch(text):
        return False
    last = text.rstrip(".").rsplit(".", 1)[-1]
    return not last.isdigit()


def node_address_error(text: str) -> str | None:
    """Why ``text`` is not a node address, or None."""
    if ip_literal(text) is not None or is_hostname(text):
        return None
    return (
        f"must be an IPv4 or IPv6 address or a host name (letters, digits, '-' and '.'); got {shown(text)}."
    )


def is_placeholder(text: str) -> bool:
    return isinstance(text, str) and bool(_PLACEHOLDER.fullmatch(text))


def host_port(host: str, port: int) -> str:
    """``host:port`` as URLs, nginx and Prometheus write it (IPv6 in brackets)."""
    addr = ip_literal(host)
    if addr is not None and addr.version == 6:
        return f"[{addr.compressed}]:{int(port)}"
    return f"{host}:{int(port)}"


# --------------------------------------------------------------------------- NIC, path, image, name

_NIC = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,14}", re.ASCII)


def nic_error(text: str) -> str | None:
    if isinstance(text, str) and _NIC.fullmatch(text) and text not in (".", ".."):
        return None
    return (
        "must be a network interface name: 1–15 letters, digits, '_', '.', '-' or '@', starting with "
        "a letter or digit "
        f"(no '/', ':' or spaces); got {shown(text)}."
    )


_PATH = re.compile(r"/[A-Za-z0-9_.+@=,/-]{0,1023}", re.ASCII)


def model_path_error(text: str) -> str | None:
    if isinstance(text, str) and _PATH.fullmatch(text):
        return None
    return (
        "must be an absolute path (starting with '/') of letters, digits and _ . - + @ = , / only; "
        f"got {shown(text)}."
    )


# distribution/reference regexp.go (main): domain, path components, tag, digest.
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_DOMAIN = rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*(?::[0-9]+)?"
_PATH_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*"
_TAG = r"[\w][\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
_IMAGE = re.compile(
    rf"(?:(?P<domain>{_DOMAIN})/)?(?P<path>{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*)"
    rf"(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?",
    re.ASCII,
)


def image_error(text: str) -> str | None:
    if isinstance(text, str) and len(text) <= 512:
        m = _IMAGE.fullmatch(text)
        if m and len(text) - len(m.group("tag") or "") - len(m.group("digest") or "") <= 256:
            return None
    return (
        "must be a container image reference such as quay.io/ascend/vllm-ascend:v0.11.0 "
        f"(registry/name:tag, lower-case name, no spaces); got {shown(text)}."
    )


_SERVED_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@+-]{0,199}", re.ASCII)


def served_name_error(text: str) -> str | None:
    if isinstance(text, str) and _SERVED_NAME.fullmatch(text):
        return None
    return (
        "must be 1–200 letters, digits or _ . - : / @ + starting with a letter or digit (no spaces); "
        f"got {shown(text)}."
    )


# Kubernetes label syntax (kubernetes.io/docs/concepts/overview/working-with-objects/labels/, "Syntax and
# character set"): a key is an optional DNS-subdomain prefix (≤ 253) and "/", then a name of ≤ 63
# alphanumerics, '-', '_', '.' beginning and ending alphanumeric; a value is empty or such a name.
_LABEL_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?", re.ASCII)
_LABEL_PREFIX = re.compile(
    r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*", re.ASCII
)


def label_key_error(text: str) -> str | None:
    if isinstance(text, str):
        prefix, _, name = text.rpartition("/")
        if _LABEL_NAME.fullmatch(name) and (
            not prefix or (len(prefix) <= 253 and _LABEL_PREFIX.fullmatch(prefix))
        ):
            return None
    return (
        "must be a Kubernetes label key such as nvidia.com/gpu.present (an optional DNS prefix and '/', then "
        f"1–63 letters, digits, '-', '_' or '.' starting and ending with a letter or digit); got {shown(text)}."
    )


def label_value_error(text: str) -> str | None:
    if isinstance(text, str) and (text == "" or _LABEL_NAME.fullmatch(text)):
        return None
    return (
        "must be a Kubernetes label value: at most 63 letters, digits, '-', '_' or '.', starting and ending "
        f"with a letter or digit; got {shown(text)}."
    )


def port_error(value: object) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535:
        return None
    return f"must be a port number 1–65535; got {shown(str(value))}."


# --------------------------------------------------------------------------- free text

# Control characters (Cc), format characters (Cf: bidi overrides, zero-width),
# line/paragraph separators (Zl, Zp), surrogates, private use and unassigned.
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


def control_chars(text: str) -> list[str]:
    """The distinct unsafe characters in ``text`` as U+XXXX codes (empty if none)."""
    found = sorted({ch for ch in text if unicodedata.category(ch) in _UNSAFE_CATEGORIES})
    return [f"U+{ord(ch):04X}" for ch in found]


def one_line(text: str, limit: int = 300) -> str:
    """``text`` as one printable line: control and separator characters become spaces."""
    out = "".join(" " if unicodedata.category(ch) in _UNSAFE_CATEGORIES else ch for ch in str(text))
    out = " ".join(out.split())
    return out if len(out) <= limit else out[: limit - 1] + "…"


def shown(text: object) -> str:
    """A value as an error message may quote it: one line, short, visible escapes."""
    return repr(str(text)[:60]) + ("…" if len(str(text)) > 60 else "")
