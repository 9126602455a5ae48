"""Accelerators, servers (with their NICs), switches and racks."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from catalog.validators import single_line

from .base import SourcedModel, non_negative


class SoftwareStack(models.TextChoices):
    ASCEND = "ascend", _("Ascend (CANN, HCCL)")
    CUDA = "cuda", _("CUDA (NCCL)")
    ROCM = "rocm", _("ROCm (RCCL)")


class VllmSupport(models.TextChoices):
    """Whether vLLM (or its hardware plugin, vLLM-Ascend) runs on the accelerator, as its docs say."""

    SUPPORTED = "supported", _("supported")
    EXPERIMENTAL = "experimental", _("experimental")
    NONE = "none", _("not supported")


class Generation(models.TextChoices):
    """The accelerator generation the launch recipes key their profiles by (configurator/engine/recipes.py)."""

    A3 = "a3", _("Atlas A3 (Ascend 910C)")
    A2 = "a2", _("Atlas A2 (Ascend 910B)")
    HOPPER = "hopper", _("NVIDIA Hopper")
    BLACKWELL = "blackwell", _("NVIDIA Blackwell (B200/B300)")
    BLACKWELL_PCIE = "blackwell-pcie", _("NVIDIA Blackwell workstation (RTX PRO, sm_120)")
    AMPERE = "ampere", _("NVIDIA Ampere")
    ADA = "ada", _("NVIDIA Ada Lovelace")
    CDNA3 = "cdna3", _("AMD CDNA 3")
    CDNA4 = "cdna4", _("AMD CDNA 4")


class Fabric(models.TextChoices):
    LINGQU = "lingqu", _("LingQu (UB)")
    ROCE = "roce", _("RoCE")
    INFINIBAND = "infiniband", _("InfiniBand")
    ETHERNET = "ethernet", _("Ethernet")
    NVLINK = "nvlink", _("NVLink")
    PCIE = "pcie", _("PCIe")
    HCCS = "hccs", _("HCCS")
    XGMI = "xgmi", _("Infinity Fabric (xGMI)")
    MANAGEMENT = "management", _("Management")


class NicRole(models.TextChoices):
    SCALE_UP = "scale_up", _("scale-up (parameter plane inside the super-node)")
    SCALE_OUT = "scale_out", _("scale-out (parameter plane between nodes)")
    SERVICE = "service", _("service plane")
    MANAGEMENT = "management", _("management plane")


class SwitchFabric(models.TextChoices):
    LINGQU = "lingqu", _("LingQu (UB)")
    ROCE = "roce", _("RoCE")
    INFINIBAND = "infiniband", _("InfiniBand")
    ETHERNET = "ethernet", _("Ethernet")
    MANAGEMENT = "management", _("Management")


class Cooling(models.TextChoices):
    AIR = "air", _("air")
    CONTAINMENT = "containment", _("air with aisle containment")
    LIQUID = "liquid", _("liquid")


def _dec(verbose, max_digits=10, places=2, help_text="", **kw) -> models.DecimalField:
    return models.DecimalField(
        verbose,
        max_digits=max_digits,
        decimal_places=places,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0"))],
        help_text=help_text,
        **kw,
    )


class Origin(models.TextChoices):
    """Where the maker of a server or switch is based, for the domestic IT (信创) statement of the
    proposal.  Empty: not known, which the proposal prints as such and never counts as domestic."""

    DOMESTIC = "domestic", _("domestic (a maker based in China)")
    FOREIGN = "foreign", _("foreign")
    UNKNOWN = "", _("not known")


ORIGIN_HELP = _("Where the maker is based (with its source); empty = not known, never counted as domestic.")


class Accelerator(SourcedModel):
    """An accelerator package and the logical devices the serving engine sees in it.

    A 910C package holds two dies, so ``logical_devices_per_package`` is 2 and
    memory, bandwidth and TFLOPS are given per logical device (per die).
    """

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=120, validators=[single_line])
    vendor = models.CharField(_("vendor"), max_length=60, validators=[single_line])
    domestic = models.BooleanField(_("domestic (Xinchuang)"), default=False)
    software_stack = models.CharField(
        _("software stack"), max_length=8, choices=SoftwareStack.choices, default=SoftwareStack.CUDA
    )
    logical_devices_per_package = models.PositiveSmallIntegerField(
        _("logical devices per package"), default=1, validators=[MinValueValidator(1)]
    )
    memory_gb = _dec(
        _("memory per logical device (GB)"), 8, 2, _("Decimal gigabytes (10⁹ bytes) as the vendor quotes.")
    )
    runtime_memory_gib = models.DecimalField(
        _("memory as the runtime reports it (GiB)"),
        max_digits=8,
        decimal_places=2,
        default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0"))],
        help_text=_(
            "Total per logical device as torch.cuda / torch.npu report it (vLLM's “total_gpu_memory”), "
            "which gpu_memory_utilization multiplies; 0 = use the vendor figure."
        ),
    )
    memory_bandwidth_tbps = _dec(_("memory bandwidth per logical device (TB/s)"), 8, 3)
    tflops_bf16 = _dec(_("dense BF16 TFLOPS per logical device"), 10, 1)
    tflops_fp16 = _dec(_("dense FP16 TFLOPS per logical device"), 10, 1)
    tflops_fp8 = _dec(_("dense FP8 TFLOPS per logical device"), 10, 1, _("0 when not supported natively."))
    tflops_int8 = _dec(_("dense INT8 TOPS per logical device"), 10, 1)
    tflops_mxfp4 = _dec(
        _("dense MXFP4 TFLOPS per logical device"), 10, 1, _("0 when not supported natively.")
    )
    tdp_w = _dec(_("TDP per package (W)"), 8, 0)
    vllm_support = models.CharField(
        _("vLLM support"),
        max_length=12,
        choices=VllmSupport.choices,
        default=VllmSupport.SUPPORTED,
        help_text=_(
            "As the vLLM / vLLM-Ascend documentation lists the device; plans are refused when not supported."
        ),
    )
    vllm_support_note = models.CharField(
        _("vLLM support: why"),
        max_length=200,
        blank=True,
        validators=[single_line],
        help_text=_(
            "The reason shown when a plan is refused or warned (e.g. “not in vLLM-Ascend's device list”)."
        ),
    )

    generation = models.CharField(
        _("generation"),
        max_length=16,
        choices=Generation.choices,
        blank=True,
        help_text=_(
            "The generation the launch recipes are chosen by (e.g. Hopper: the H200 recipe's serving values); "
            "empty: the platform's generic recipe."
        ),
    )

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ("software_stack", "domestic", "vllm_support", "generation")

    class Meta:
        ordering = ["vendor", "name"]
        verbose_name = _("accelerator")
        verbose_name_plural = _("accelerators")
        constraints = [
            models.CheckConstraint(
                condition=Q(memory_gb__gt=0),
                name="catalog_accelerator_memory_positive",
                violation_error_message=_("Memory per logical device must be positive."),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def memory_per_package_gb(self) -> Decimal:
        return self.memory_gb * self.logical_devices_per_package

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        non_negative(
            errors,
            self,
            (
                "memory_bandwidth_tbps",
                "tflops_bf16",
                "tflops_fp16",
                "tflops_fp8",
                "tflops_int8",
                "tflops_mxfp4",
                "tdp_w",
            ),
        )
        if self.memory_gb is not None and self.memory_gb <= 0 and "memory_gb" not in errors:
            message = (
                _("Memory cannot be negative.")
                if self.memory_gb < 0
                else _("An accelerator needs some memory.")
            )
            errors["memory_gb"] = [ValidationError(message, code="memory")]
        if errors:
            raise ValidationError(errors)


class ServerModel(SourcedModel):
    """A server model: its accelerators, size, power and scale-up fabric.  NICs are inline."""

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=120, validators=[single_line])
    name_zh = models.CharField(
        _("name (Chinese)"),
        max_length=120,
        blank=True,
        help_text=_("Printed in Chinese proposals; empty: the name."),
        validators=[single_line],
    )
    vendor = models.CharField(_("vendor"), max_length=60, validators=[single_line])
    origin = models.CharField(
        _("origin"), max_length=10, choices=Origin.choices, blank=True, help_text=ORIGIN_HELP
    )
    is_active = models.BooleanField(_("offered in the configurator"), default=True)
    accelerator = models.ForeignKey(
        Accelerator, verbose_name=_("accelerator"), on_delete=models.PROTECT, related_name="servers"
    )
    packages = models.PositiveSmallIntegerField(_("accelerator packages"), validators=[MinValueValidator(1)])
    logical_devices = models.PositiveSmallIntegerField(
        _("logical devices"),
        help_text=_(
            "Devices the serving engine sees: packages × logical devices per package (A3: 8 × 2 = 16)."
        ),
    )
    rack_units = models.PositiveSmallIntegerField(_("rack units (U)"))
    max_input_kw = _dec(_("maximum input power (kW)"), 8, 2)
    weight_kg = _dec(
        _("weight (kg)"),
        7,
        2,
        _("Fully configured, as the vendor's specification gives it; 0 = not known (no rack weight)."),
    )
    typical_load_factor = _dec(
        _("typical load factor"),
        4,
        2,
        _("Average draw ÷ maximum input while serving."),
    )
    psu_count = models.PositiveSmallIntegerField(_("PSUs"), default=0)
    psu_watts = models.PositiveIntegerField(_("watts per PSU"), default=0)
    psu_redundant = models.PositiveSmallIntegerField(_("redundant PSUs"), default=0, help_text=_("5+1 → 1."))
    scale_up_fabric = models.CharField(
        _("scale-up fabric"), max_length=12, choices=Fabric.choices, default=Fabric.PCIE
    )
    scale_up_bandwidth_gbps = _dec(
        _("scale-up bandwidth (Gbit/s)"),
        10,
        0,
        _("Bidirectional per accelerator package, as the vendor quotes it (784 GB/s = 6,272 Gbit/s)."),
    )
    scale_up_domain_devices = models.PositiveIntegerField(
        _("scale-up domain (logical devices)"),
        default=0,
        help_text=_("Logical devices one scale-up fabric can join; 0 = only this server's own."),
    )
    cpu = models.CharField(_("CPU"), max_length=120, blank=True, validators=[single_line])
    ram_gb = models.PositiveIntegerField(_("system memory (GB)"), default=0)
    storage = models.CharField(_("storage"), max_length=120, blank=True, validators=[single_line])
    validated_text_only = models.BooleanField(
        _("validated for text-only serving"),
        default=False,
        help_text=_("A public recipe validates this server for text input only (no images)."),
    )
    notes = models.TextField(_("notes"), blank=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ("scale_up_fabric", "validated_text_only", "origin")

    class Meta:
        ordering = ["vendor", "name"]
        verbose_name = _("server model")
        verbose_name_plural = _("server models")
        constraints = [
            models.CheckConstraint(
                condition=Q(rack_units__gte=1),
                name="catalog_server_rack_units_positive",
                violation_error_message=_("A server takes at least 1 U."),
            ),
            models.CheckConstraint(
                condition=Q(packages__gte=1),
                name="catalog_server_packages_positive",
                violation_error_message=_("A server holds at least one accelerator package."),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def memory_per_node_gb(self) -> Decimal:
        return self.accelerator.memory_gb * self.logical_devices

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        non_negative(errors, self, ("max_input_kw", "typical_load_factor", "scale_up_bandwidth_gbps"))
        if self.rack_units is not None and self.rack_units < 1:
            errors.setdefault("rack_units", []).append(
                ValidationError(_("A server takes at least 1 U of rack space."), code="rack_units")
            )
        if self.max_input_kw is not None and self.max_input_kw <= 0 and "max_input_kw" not in errors:
            errors["max_input_kw"] = [ValidationError(_("Maximum input power must be positive."))]
        if self.typical_load_factor is not None and self.typical_load_factor > 1:
            errors.setdefault("typical_load_factor", []).append(
                ValidationError(_("The load factor is a fraction of maximum input (0–1)."))
            )
        if self.accelerator_id and self.packages:
            expected = self.packages * self.accelerator.logical_devices_per_package
            if self.logical_devices != expected:
                errors.setdefault("logical_devices", []).append(
                    ValidationError(
                        _(
                            "%(packages)s packages × %(per)s logical devices per package = %(expected)s, "
                            "not %(given)s."
                        ),
                        params={
                            "packages": self.packages,
                            "per": self.accelerator.logical_devices_per_package,
                            "expected": expected,
                            "given": self.logical_devices,
                        },
                        code="logical_devices",
                    )
                )
        if self.psu_redundant and self.psu_redundant >= max(self.psu_count, 1):
            errors.setdefault("psu_redundant", []).append(
                ValidationError(_("Redundant PSUs must be fewer than the PSUs."))
            )
        if (
            self.scale_up_domain_devices
            and self.logical_devices
            and self.scale_up_domain_devices < self.logical_devices
        ):
            errors.setdefault("scale_up_domain_devices", []).append(
                ValidationError(_("The scale-up domain includes at least the server's own devices (or 0)."))
            )
        if errors:
            raise ValidationError(errors)


class ServerNic(models.Model):
    """A group of identical network ports on a server model, by fabric and role."""

    server = models.ForeignKey(
        ServerModel, verbose_name=_("server"), on_delete=models.CASCADE, related_name="nics"
    )
    fabric = models.CharField(_("fabric"), max_length=12, choices=Fabric.choices)
    role = models.CharField(_("role"), max_length=12, choices=NicRole.choices, default=NicRole.SCALE_OUT)
    count = models.PositiveSmallIntegerField(_("ports"), validators=[MinValueValidator(1)])
    speed_gbps = models.PositiveIntegerField(_("speed per port (Gbit/s)"), validators=[MinValueValidator(1)])
    source_kind = models.CharField(
        _("source"),
        max_length=8,
        choices=[
            ("seed", _("seed document")),
            ("public", _("public source")),
            ("assumed", _("assumed")),
            ("admin", _("edited in admin")),
        ],
        default="admin",
    )
    source_ref = models.CharField(_("reference"), max_length=200, blank=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["server", "role", "fabric"]
        verbose_name = _("server NIC group")
        verbose_name_plural = _("server NIC groups")
        constraints = [
            models.UniqueConstraint(
                fields=["server", "fabric", "role"], name="catalog_servernic_unique_fabric_role"
            ),
            models.CheckConstraint(condition=Q(count__gte=1), name="catalog_servernic_count_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.count} × {self.speed_gbps}G {self.get_fabric_display()} ({self.get_role_display()})"

    def is_assumed(self, field_name: str = "count") -> bool:
        return self.source_kind == "assumed"


class SwitchModel(SourcedModel):
    """A network switch model, by fabric."""

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=120, validators=[single_line])
    name_zh = models.CharField(
        _("name (Chinese)"),
        max_length=120,
        blank=True,
        help_text=_("Printed in Chinese proposals; empty: the name."),
        validators=[single_line],
    )
    vendor = models.CharField(_("vendor"), max_length=60, blank=True, validators=[single_line])
    origin = models.CharField(
        _("origin"), max_length=10, choices=Origin.choices, blank=True, help_text=ORIGIN_HELP
    )
    fabric = models.CharField(_("fabric"), max_length=12, choices=SwitchFabric.choices)
    ports = models.PositiveSmallIntegerField(_("ports"), validators=[MinValueValidator(1)])
    port_speed_gbps = models.PositiveIntegerField(_("port speed (Gbit/s)"), validators=[MinValueValidator(1)])
    rack_units = models.PositiveSmallIntegerField(_("rack units (U)"), default=1)
    power_kw = _dec(_("power (kW)"), 8, 2)
    weight_kg = _dec(_("weight (kg)"), 7, 2, _("With PSUs and fans; 0 = not known."))
    notes = models.TextField(_("notes"), blank=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ("fabric", "origin")

    class Meta:
        ordering = ["fabric", "name"]
        verbose_name = _("switch model")
        verbose_name_plural = _("switch models")
        constraints = [
            models.CheckConstraint(
                condition=Q(rack_units__gte=1),
                name="catalog_switch_rack_units_positive",
                violation_error_message=_("A switch takes at least 1 U."),
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        non_negative(errors, self, ("power_kw",))
        if self.rack_units is not None and self.rack_units < 1:
            errors.setdefault("rack_units", []).append(
                ValidationError(_("A switch takes at least 1 U of rack space."))
            )
        if self.ports is not None and self.ports < 1:
            errors.setdefault("ports", []).append(ValidationError(_("A switch has at least one port.")))
        if errors:
            raise ValidationError(errors)


class RackType(SourcedModel):
    """A rack (cabinet) type: height, power budget and cooling class."""

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    name = models.CharField(_("name"), max_length=120, validators=[single_line])
    name_zh = models.CharField(
        _("name (Chinese)"),
        max_length=120,
        blank=True,
        help_text=_("Printed in Chinese proposals; empty: the name."),
        validators=[single_line],
    )
    rack_units = models.PositiveSmallIntegerField(_("height (U)"), default=42)
    max_kw = _dec(
        _("power budget (kW)"),
        8,
        2,
        _("What the rack's A/B PDUs may deliver; cooling is checked separately."),
    )
    cooling = models.CharField(_("cooling"), max_length=12, choices=Cooling.choices, default=Cooling.AIR)
    pdu_units = models.PositiveSmallIntegerField(
        _("U taken by PDUs"), default=0, help_text=_("Horizontal PDUs take U; vertical PDUs take none.")
    )
    reserved_units = models.PositiveSmallIntegerField(
        _("reserved U"), default=2, help_text=_("Cable management and blanking panels.")
    )
    weight_kg = _dec(_("empty weight (kg)"), 7, 2, _("The cabinet with its PDUs, without equipment."))
    width_mm = models.PositiveSmallIntegerField(_("width (mm)"), default=600)
    depth_mm = models.PositiveSmallIntegerField(
        _("depth (mm)"),
        default=1200,
        help_text=_("Width × depth is the footprint the floor loading is taken over."),
    )
    is_default = models.BooleanField(_("default rack"), default=False)
    notes = models.TextField(_("notes"), blank=True)

    history = HistoricalRecords(excluded_fields=["seed_values"])
    extra_sourced_fields = ("cooling",)

    class Meta:
        ordering = ["rack_units", "name"]
        verbose_name = _("rack type")
        verbose_name_plural = _("rack types")
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"], condition=Q(is_default=True), name="catalog_racktype_single_default"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def usable_units(self) -> int:
        return self.rack_units - self.pdu_units - self.reserved_units

    def clean(self) -> None:
        errors: dict[str, list] = {}
        try:
            super().clean()
        except ValidationError as exc:
            errors.update(exc.update_error_dict({}))
        non_negative(errors, self, ("max_kw",))
        if self.rack_units is not None and self.rack_units < 1:
            errors.setdefault("rack_units", []).append(ValidationError(_("A rack is at least 1 U high.")))
        elif self.usable_units < 1:
            errors.setdefault("reserved_units", []).append(
                ValidationError(_("PDUs and reserved units leave no room for equipment."))
            )
        if self.max_kw is not None and self.max_kw <= 0 and "max_kw" not in errors:
            errors["max_kw"] = [ValidationError(_("The power budget must be positive."))]
        if errors:
            raise ValidationError(errors)


__all__ = [
    "Accelerator",
    "Cooling",
    "Fabric",
    "NicRole",
    "RackType",
    "ServerModel",
    "ServerNic",
    "SoftwareStack",
    "SwitchFabric",
    "SwitchModel",
]
