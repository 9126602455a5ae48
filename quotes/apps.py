from django.apps import AppConfig


class QuotesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "quotes"

    def ready(self):
        # Notifications on approval requests and decisions (post_save receivers).
        from . import notify

        notify.connect_catalog_signals()  # price changes → owners of the open quotes they touch
