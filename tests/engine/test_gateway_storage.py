"""The gateway drawn in the architecture and storage for the checkpoint are in the bill of materials.

Kimi K3's MXFP4 release is ≈ 1.56 TB on disk (the issue's reviewers read "1.56 TB weights" off the
proposal; catalog/seed/models.yaml kimi-k3 sums its tensors to 1.5609 × 10¹² B).  Shared
storage keeps two versions (the one served and the next): 2 × 1.56 TB = 3.12 TB → 4 TB usable, at
the seeded price list's ¥8,000 per TB.  The gateway is two 1U servers, active/standby, at the seeded
price list's assumed ¥60,000 each (catalog/seed/price_lists.yaml cny-2026: storage_price_per_tb,
gateway_unit_price, gateways).
"""

from __future__ import annotations

from decimal import Decimal

from configurator import reference
from configurator.engine.plan import plan
from configurator.engine.serialize import plan_to_dict
from documents.pdf.sample import sample_plan_kwargs, sample_request
from quotes.bom import bom_lines_from_plan


def test_gateway_and_checkpoint_storage_lines_match_the_engines_capex():
    request = sample_request("4node")  # the plan the sample's prices belong to
    assert round(request.model.weight_bytes / 1e12, 2) == 1.56
    result = plan(request)
    capex = result.tco.capex
    assert capex.storage_tb == 4
    terms = reference.commercial("atlas-800-a3", nodes=4)
    assert capex.storage == 4 * terms.storage_price_per_tb == Decimal("32000")
    assert capex.gateway == terms.gateways * terms.gateway_unit_price == Decimal("120000")

    kwargs = sample_plan_kwargs("4node")
    lines = bom_lines_from_plan(plan_to_dict(result), kwargs["prices_json"], request=kwargs["resolved_json"])
    other = {
        x["description_en"]: (x["quantity"], x["unit"], x["unit_price"])
        for x in lines
        if x["category"] == "other" and not x["description_en"].startswith("Dual-port 25GE NIC")
    }
    # the NIC cards the plan adds for the service and storage planes (one per node) are priced on request
    nics = [x for x in lines if x["description_en"].startswith("Dual-port 25GE NIC")]
    assert [(x["quantity"], x["unit_price"], x["note"]) for x in nics] == [(4, 0, "Price on request")] * 2
    assert other == {
        "Gateway / load balancer server (active/standby; 1U, 2 × 25GE on the service plane) (generic item)": (
            2,
            "pcs",
            Decimal("60000"),
        ),
        # a named product class (S1 §3.1 "e.g. OceanStor"), not "storage" of nothing in particular
        "All-flash NAS storage for the model checkpoint (dual controllers, NFS over the storage plane; "
        "OceanStor Dorado class or equivalent), usable TB, two checkpoint versions (generic item)": (
            4,
            "TB",
            Decimal("8000"),
        ),
    }
    # Every capex line together is the engine's capex subtotal, to the cent.
    capex_lines = sum(
        x["quantity"] * x["unit_price"] for x in lines if x["category"] not in ("om", "software", "lease")
    )
    assert capex_lines == capex.subtotal
