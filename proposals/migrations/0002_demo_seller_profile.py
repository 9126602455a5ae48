"""A seller profile to start from, so that every proposal has a seller and a signer; edit it in the admin."""

from django.db import migrations


def create(apps, schema_editor):
    SellerProfile = apps.get_model("proposals", "SellerProfile")
    if SellerProfile.objects.exists():
        return
    SellerProfile.objects.create(
        company_zh="华东智算系统集成有限公司",
        company_en="East China AI Systems Integration Co., Ltd.",
        address_zh="上海市浦东新区张江高科技园区",
        address_en="Zhangjiang Hi-Tech Park, Pudong, Shanghai",
        contact_name="李伟",
        contact_phone="+86 21 5000 0000",
        contact_email="presales@example.com",
        signer_name="王磊",
        signer_title_zh="销售副总裁",
        signer_title_en="Vice President, Sales",
    )


class Migration(migrations.Migration):
    dependencies = [("proposals", "0001_seller_profile_and_quote_terms")]

    operations = [migrations.RunPython(create, migrations.RunPython.noop)]
