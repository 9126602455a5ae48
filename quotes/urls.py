"""Quote URLs.

``pdf``, ``xlsx`` and ``bundle`` start as placeholders (404 "not available
yet"); when the proposal/export code is installed (``quotes/pdf_urls.py``) its
patterns replace those of the same name, keeping the revision-pk argument.
"""

from importlib.util import find_spec

from django.urls import path

from . import benchmark_views, views

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
    path("revisions/<int:pk>/benchmark/", benchmark_views.revision_benchmark_upload, name="benchmark"),
]

# Checked with find_spec rather than a guarded import, so an error inside the
# export code surfaces instead of silently bringing the placeholders back.
if find_spec("quotes.pdf_urls") is not None:
    from . import pdf_urls

    _replaced = {p.name for p in pdf_urls.urlpatterns}
    urlpatterns = [p for p in urlpatterns if p.name not in _replaced] + list(pdf_urls.urlpatterns)
