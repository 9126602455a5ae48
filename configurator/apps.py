from django.apps import AppConfig


class ConfiguratorConfig(AppConfig):
    default_auto_field = 'django.db.models.BigAutoField'
    name = 'configurator'
