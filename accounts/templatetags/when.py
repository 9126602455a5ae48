"""``{{ value|when }}``: a time in the site's time zone with the zone named (``accounts/timefmt.py``)."""

from django import template

from accounts.timefmt import local_stamp

register = template.Library()


@register.filter
def when(value) -> str:
    return local_stamp(value)
