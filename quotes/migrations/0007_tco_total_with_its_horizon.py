"""TCO totals stored with their horizon: tco_buy_3y/tco_lease_3y held the planned horizon's figure
(a 5-year plan stored a 5-year TCO under "3y"), so they are renamed and the horizon is stored beside them."""

from django.db import migrations, models


def fill_horizon(apps, schema_editor):
    QuoteRevision = apps.get_model("quotes", "QuoteRevision")
    for revision in QuoteRevision.objects.exclude(tco_buy_total=None).only("id", "result_json"):
        tco = (revision.result_json or {}).get("tco") if isinstance(revision.result_json, dict) else None
        years = tco.get("horizon_years") if isinstance(tco, dict) else None
        if isinstance(years, int) and years > 0:
            QuoteRevision.objects.filter(pk=revision.pk).update(tco_horizon_years=years)


class Migration(migrations.Migration):
    dependencies = [("quotes", "0006_workflow_share_links_notifications_accepted")]

    operations = [
        migrations.RenameField("quoterevision", "tco_buy_3y", "tco_buy_total"),
        migrations.RenameField("quoterevision", "tco_lease_3y", "tco_lease_total"),
        migrations.AlterField(
            model_name="quoterevision",
            name="tco_buy_total",
            field=models.DecimalField(
                blank=True, decimal_places=2, max_digits=18, null=True, verbose_name="TCO, purchase"
            ),
        ),
        migrations.AlterField(
            model_name="quoterevision",
            name="tco_lease_total",
            field=models.DecimalField(
                blank=True, decimal_places=2, max_digits=18, null=True, verbose_name="TCO, lease"
            ),
        ),
        migrations.AddField(
            model_name="quoterevision",
            name="tco_horizon_years",
            field=models.PositiveSmallIntegerField(blank=True, null=True, verbose_name="TCO horizon (years)"),
        ),
        migrations.RunPython(fill_horizon, migrations.RunPython.noop),
    ]
