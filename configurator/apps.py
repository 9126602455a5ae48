from django.apps import AppConfig


class ConfiguratorConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "configurator"

    def ready(self) -> None:
        from django.apps import apps
        from django.db.models.signals import m2m_changed, post_delete, post_save

        from .port.cache import bump_catalog_version

        for model in apps.get_app_config("catalog").get_models():
            post_save.connect(
                bump_catalog_version, sender=model, dispatch_uid=f"catalog-stamp-save-{model.__name__}"
            )
            post_delete.connect(
                bump_catalog_version, sender=model, dispatch_uid=f"catalog-stamp-del-{model.__name__}"
            )
        m2m_changed.connect(bump_catalog_version, dispatch_uid="catalog-stamp-m2m")
