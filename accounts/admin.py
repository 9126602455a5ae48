from django.contrib import admin

from .models import Profile, Team


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    search_fields = ["name"]


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ["user", "team", "display_name"]
    list_filter = ["team"]
    search_fields = ["user__username", "display_name"]
