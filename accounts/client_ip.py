"""The client address that log-in throttling (django-axes) keys its lock-outs on.

Behind a reverse proxy every request comes from the proxy's address, so a
lock-out keyed on (user name, REMOTE_ADDR) becomes a lock-out of the user
name for everyone: one client could lock any colleague out for 15 minutes
(issue 13).  With ``TRUSTED_PROXIES`` set (comma-separated addresses or
networks of the proxies in front of gunicorn), the client is the right-most
address of ``X-Forwarded-For`` that is not one of those proxies — the one the
nearest trusted proxy saw; addresses a client writes into the header itself
sit further left and are never used.  Without ``TRUSTED_PROXIES`` the header
is ignored and REMOTE_ADDR is the client (a direct deployment, where the header
could be forged).

Wired in as ``AXES_CLIENT_IP_CALLABLE`` (settings.py); django-ipware, which
axes' ``AXES_IPWARE_*`` settings configure, is not installed.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings


@lru_cache(maxsize=8)
def _networks(spec: tuple[str, ...]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in spec)


def _address(text: str):
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(address, networks) -> bool:
    return any(address in network for network in networks)


def client_ip(request) -> str:
    """The client's IP address (text), as described in the module docstring."""
    remote = (request.META.get("REMOTE_ADDR") or "").strip()
    networks = _networks(tuple(getattr(settings, "TRUSTED_PROXIES", ()) or ()))
    remote_address = _address(remote)
    if not networks or remote_address is None or not _trusted(remote_address, networks):
        return remote
    hops = [h for h in (request.META.get("HTTP_X_FORWARDED_FOR") or "").split(",") if h.strip()]
    for hop in reversed(hops):
        address = _address(hop)
        if address is None:
            return remote  # a malformed chain: trust nothing in it
        if not _trusted(address, networks):
            return str(address)
    return remote
