"""The team's customers, and a form to add one."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods

from .. import selectors
from ..forms import (
    CustomerForm,
)
from ..services.customers import customer_create
from .common import (
    errors_into_form,
)


@require_http_methods(["GET", "POST"])
def customer_list(request: HttpRequest) -> HttpResponse:
    """The team's customers, and a form to add one."""
    if not request.user.has_perm("quotes.view_quote"):
        raise PermissionDenied(_("Your role does not allow this."))
    status = 200
    form = CustomerForm(request.POST or None)
    if request.method == "POST":
        if not request.user.has_perm("quotes.add_quote"):
            raise PermissionDenied(_("Your role does not allow this."))
        if form.is_valid():
            try:
                customer = customer_create(by=request.user, **form.cleaned_data)
            except ValidationError as exc:
                errors_into_form(form, exc)
                status = 400
            else:
                messages.success(request, _("Customer %(name)s added.") % {"name": customer.name})
                return redirect(reverse("quotes:customers"))
        else:
            status = 400
    customers = selectors.customers_visible_to(request.user)
    return render(request, "quotes/customers.html", {"customers": customers, "form": form}, status=status)
