"""Roles are groups with permissions.  The names are stable identifiers."""

from __future__ import annotations

SALES_ENGINEER = "sales_engineer"
SALES_MANAGER = "sales_manager"
CATALOG_ADMIN = "catalog_admin"
ROLES = (SALES_ENGINEER, SALES_MANAGER, CATALOG_ADMIN)


def has_role(user, role: str) -> bool:
    """True when the (authenticated) user belongs to the role's group."""
    if not getattr(user, "is_authenticated", False):
        return False
    cache = getattr(user, "_role_cache", None)
    if cache is None:
        cache = set(user.groups.values_list("name", flat=True))
        user._role_cache = cache
    return role in cache


def is_sales(user) -> bool:
    return has_role(user, SALES_ENGINEER) or has_role(user, SALES_MANAGER)


def is_manager(user) -> bool:
    return has_role(user, SALES_MANAGER)


def is_catalog_admin(user) -> bool:
    return has_role(user, CATALOG_ADMIN) or getattr(user, "is_superuser", False)


def team_of(user):
    profile = getattr(user, "profile", None)
    return profile.team if profile is not None else None
