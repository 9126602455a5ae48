"""URL patterns of the proposal PDF, the workbook and the launch bundle.

Added to the ``quotes`` namespace by ``quotes/urls.py``.
"""

from django.urls import path

from . import pdf_views

urlpatterns = [
    path("revisions/<int:pk>/pdf/", pdf_views.revision_pdf_download, name="pdf"),
    path("revisions/<int:pk>/pdf/internal/", pdf_views.revision_pdf_internal, name="pdf_internal"),
    path("revisions/<int:pk>/pdf/status/", pdf_views.revision_pdf_status, name="pdf_status"),
    path("revisions/<int:pk>/pdf/render/", pdf_views.revision_pdf_render, name="pdf_render"),
    path("revisions/<int:pk>/pdf/retry/", pdf_views.revision_pdf_retry, name="pdf_retry"),
    path("revisions/<int:pk>/xlsx/", pdf_views.revision_xlsx_download, name="xlsx"),
    path("revisions/<int:pk>/bundle/", pdf_views.revision_bundle_download, name="bundle"),
]
