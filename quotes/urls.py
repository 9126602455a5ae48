"""Quote URLs.  ``pdf``, ``xlsx`` and ``bundle`` are the download hooks that the
proposal/export code replaces (same names, same revision-pk argument)."""

from django.urls import path

from . import views

app_name = "quotes"
urlpatterns = [
    path("", views.quote_list, name="list"),
    path("create/", views.quote_create, name="create"),
    path("customers/", views.customer_list, name="customers"),
    path("<int:pk>/", views.quote_detail, name="detail"),
    path("<int:pk>/edit/", views.quote_edit, name="edit"),
    path("<int:pk>/transition/", views.quote_transition_view, name="transition"),
    path("<int:pk>/compare/", views.revision_compare_view, name="compare"),
    path("revisions/<int:pk>/revise/", views.revision_revise, name="revise"),
    path("revisions/<int:pk>/issue/", views.revision_issue_view, name="issue"),
    path("revisions/<int:pk>/approve/", views.revision_approve_view, name="approve"),
    path("revisions/<int:pk>/reject/", views.revision_reject_view, name="reject"),
    path("revisions/<int:pk>/pdf/", views.revision_pdf, name="pdf"),
    path("revisions/<int:pk>/xlsx/", views.revision_xlsx, name="xlsx"),
    path("revisions/<int:pk>/bundle/", views.revision_bundle, name="bundle"),
]
