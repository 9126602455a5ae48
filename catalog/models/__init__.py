"""Catalog reference data: one module per concern, re-exported here."""

from .base import SOURCE_KINDS, SourcedModel
from .checkpoint import Checkpoint
from .draft import SpeculativeDraft, SpeculativeMethod
from .hardware import (
    Accelerator,
    Cooling,
    Fabric,
    Generation,
    NicRole,
    RackType,
    ServerModel,
    ServerNic,
    SoftwareStack,
    SwitchFabric,
    SwitchModel,
)
from .llm import ActivationFormat, LlmModel, WeightFormat
from .pricing import PriceItem, PriceKind, PriceList, PriceUnit
from .scenarios import Scenario, TopologyKind, TopologyTemplate
from .site import SiteProfile

__all__ = [
    "SOURCE_KINDS",
    "Accelerator",
    "ActivationFormat",
    "Checkpoint",
    "Cooling",
    "Fabric",
    "LlmModel",
    "NicRole",
    "PriceItem",
    "PriceKind",
    "PriceList",
    "PriceUnit",
    "RackType",
    "Scenario",
    "ServerModel",
    "ServerNic",
    "SiteProfile",
    "Generation",
    "SoftwareStack",
    "SourcedModel",
    "SpeculativeDraft",
    "SpeculativeMethod",
    "SwitchFabric",
    "SwitchModel",
    "TopologyKind",
    "TopologyTemplate",
    "WeightFormat",
]
