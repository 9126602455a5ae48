"""Forms for the quote pages.  They parse and validate input; the services decide."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django import forms
from django.utils import timezone
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from catalog import jsonlimits

from . import selectors
from .models import Customer
from .statuses import Language, QuoteStatus

MAX_REQUEST_JSON_CHARS = 1_000_000


class DiscountField(forms.CharField):
    """A discount as a fraction (``0.12``) or a percentage (``12%``), between 0 and 90 %."""

    default_error_messages = {
        "invalid": _("Enter a fraction such as 0.12 or a percentage such as 12%."),
        "range": _("A discount must be between 0 and 90 %."),
    }

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", _("Fraction (0.12) or percentage (12%)."))
        super().__init__(**kwargs)

    def to_python(self, value):
        text = (super().to_python(value) or "").strip().replace(" ", "")
        if not text:
            return Decimal("0")
        if len(text) > 12:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        percent = text.endswith("%")
        try:
            number = Decimal(text.rstrip("%"))
        except InvalidOperation:
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid") from None
        if not number.is_finite():
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        if percent:
            number = number / 100
        if number < 0 or number > Decimal("0.9"):
            raise forms.ValidationError(self.error_messages["range"], code="range")
        if number != number.quantize(Decimal("0.0001")):
            raise forms.ValidationError(
                _("Use at most two decimals of a percent (e.g. 12.25%)."), code="precision"
            )
        return number.quantize(Decimal("0.0001"))


class VersionField(forms.IntegerField):
    """The quote version the page was rendered from (optimistic lock)."""

    widget = forms.HiddenInput

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault(
            "error_messages", {"required": _("The page is out of date; reload it and try again.")}
        )
        super().__init__(**kwargs)


class QuoteCreateForm(forms.Form):
    """What the configurator posts to ``quotes:create``.

    Only the configuration *request* is taken; the plan, prices and totals are
    recomputed on the server.  ``customer`` is an existing customer's id or the
    name of a new one (``customer_name`` is accepted too).
    """

    request_json = forms.CharField(widget=forms.HiddenInput, max_length=MAX_REQUEST_JSON_CHARS)
    customer = forms.CharField(label=_("Customer"), required=False, max_length=200)
    customer_name = forms.CharField(label=_("New customer"), required=False, max_length=200)
    title = forms.CharField(label=_("Title"), required=False, max_length=200)
    discount = DiscountField(label=_("Discount"))
    language = forms.ChoiceField(label=_("Proposal language"), choices=Language.choices, required=False)
    # One key per rendering of the form: a double submit, or "back" then submit again,
    # posts the same key and gets the quote the first post created (issue 13).
    idempotency_key = forms.RegexField(
        regex=r"^[A-Za-z0-9_-]{16,64}$", required=False, widget=forms.HiddenInput
    )
    # {check code: reason} for warnings accepted on the configurator page.
    acknowledged = forms.CharField(widget=forms.HiddenInput, required=False, max_length=20_000)

    def __init__(self, user, *args, **kwargs):
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_acknowledged(self):
        from configurator.public import parse_acknowledged

        try:
            return parse_acknowledged(self.cleaned_data.get("acknowledged") or "")
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_request_json(self):
        text = self.cleaned_data["request_json"]
        try:
            data = jsonlimits.loads(text, what="request_json")
        except jsonlimits.InvalidText as exc:
            raise forms.ValidationError(
                _("The configuration's field %(field)s holds a character that is not text; retype it.")
                % {"field": exc.field}
            ) from None
        except jsonlimits.JsonLimitError as exc:
            raise forms.ValidationError(
                _("The configuration is not valid JSON: %(problem)s") % {"problem": exc}
            ) from None
        if not isinstance(data, dict) or not data:
            raise forms.ValidationError(_("The configuration must be a non-empty JSON object."))
        return data

    def clean_language(self):
        value = self.cleaned_data.get("language")
        if value:
            return value
        current = (get_language() or "").lower()
        return Language.EN if current.startswith("en") else Language.ZH_HANS

    def clean(self):
        cleaned = super().clean()
        request_json = cleaned.get("request_json")
        if not (self.data.get("discount") or "").strip() and isinstance(request_json, dict):
            # No discount typed: keep the one the configuration already carries.
            commercial = request_json.get("commercial")
            planned = commercial.get("quote_discount") if isinstance(commercial, dict) else None
            if planned is not None:
                try:
                    cleaned["discount"] = self.fields["discount"].clean(str(planned))
                except forms.ValidationError as exc:
                    self.add_error("discount", exc)
        raw = (cleaned.get("customer") or "").strip()
        name = (cleaned.get("customer_name") or "").strip()
        customer: Customer | str | None = None
        if raw.isdigit():
            customer = selectors.customers_visible_to(self.user).filter(pk=int(raw)).first()
            if customer is None:
                self.add_error(
                    "customer", _("Unknown customer; choose one from the list or type a new name.")
                )
                return cleaned
        elif raw or name:
            name = raw or name
            customer = selectors.customer_find_by_name(user=self.user, name=name) or name
        else:
            self.add_error("customer", _("Choose a customer or type the name of a new one."))
        cleaned["customer_resolved"] = customer
        return cleaned


class QuoteEditForm(forms.Form):
    version = VersionField()
    title = forms.CharField(label=_("Title"), required=False, max_length=200)
    customer = forms.ModelChoiceField(label=_("Customer"), queryset=Customer.objects.none())
    valid_until = forms.DateField(label=_("Valid until"), widget=forms.DateInput(attrs={"type": "date"}))
    language = forms.ChoiceField(label=_("Proposal language"), choices=Language.choices)

    def __init__(self, user, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["customer"].queryset = selectors.customers_visible_to(user)

    def clean_valid_until(self):
        value = self.cleaned_data["valid_until"]
        if value < timezone.localdate():
            raise forms.ValidationError(_("The validity date cannot be in the past."))
        return value


class TransitionForm(forms.Form):
    version = VersionField()
    to_status = forms.ChoiceField(choices=QuoteStatus.choices)
    comment = forms.CharField(label=_("Comment"), required=False, max_length=2000, widget=forms.Textarea)


class ReviseForm(forms.Form):
    version = VersionField()
    discount = DiscountField(label=_("Discount"))
    note = forms.CharField(label=_("What changed and why"), required=False, max_length=2000)
    replan = forms.BooleanField(
        label=_("Re-plan with today's catalog and prices"),
        required=False,
        help_text=_("A revision is re-priced at today's list unless its old prices are kept."),
    )
    keep_prices = forms.BooleanField(
        label=_("Keep the prices of this revision"),
        required=False,
        help_text=_(
            "Otherwise the new revision is re-priced at today's list. Kept prices below today's list "
            "need a sales manager's approval."
        ),
    )


class DecisionForm(forms.Form):
    version = VersionField()
    comment = forms.CharField(label=_("Comment"), required=False, max_length=2000, widget=forms.Textarea)


class ActionForm(forms.Form):
    version = VersionField()


class CustomerForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=200)
    industry = forms.CharField(label=_("Industry"), required=False, max_length=100)
    contact = forms.CharField(label=_("Contact"), required=False, max_length=200)
    notes = forms.CharField(label=_("Notes"), required=False, widget=forms.Textarea)


class QuoteFilterForm(forms.Form):
    """Search and filters of the quote list; an invalid filter is reported and ignored."""

    q = forms.CharField(label=_("Search"), required=False, max_length=100)
    customer = forms.ModelChoiceField(label=_("Customer"), queryset=Customer.objects.none(), required=False)
    status = forms.ChoiceField(label=_("Status"), required=False)
    owner = forms.ModelChoiceField(label=_("Owner"), queryset=Customer.objects.none(), required=False)
    created_from = forms.DateField(
        label=_("Created from"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    created_to = forms.DateField(
        label=_("Created to"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )

    def __init__(self, user, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["customer"].queryset = selectors.customers_visible_to(user)
        self.fields["owner"].queryset = selectors.quote_owners_visible_to(user)
        self.fields["owner"].label_from_instance = lambda u: (
            getattr(getattr(u, "profile", None), "display_name", "") or u.get_username()
        )
        self.fields["status"].choices = [("", _("Any status")), *QuoteStatus.choices]

    def filters(self) -> dict:
        """Keyword arguments for ``selectors.quote_search`` from the valid fields."""
        if not self.is_bound:
            return {}
        self.is_valid()
        data = getattr(self, "cleaned_data", {})
        return {
            "text": data.get("q") or "",
            "customer": data.get("customer"),
            "status": data.get("status") or "",
            "owner": data.get("owner"),
            "created_from": data.get("created_from"),
            "created_to": data.get("created_to"),
        }
