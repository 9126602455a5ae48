"""URL patterns of the proposal PDF, the workbook and the launch bundle.

Mounted with the quote URLs under ``/quotes/`` in the ``quotes`` namespace by ``config/urls.py``
(``quotes:pdf``, ``quotes:xlsx``, ``quotes:bundle`` …).
"""

from django.urls import path

from . import views

urlpatterns = [
    path("revisions/<int:pk>/pdf/", views.revision_pdf_download, name="pdf"),
    path("revisions/<int:pk>/pdf/internal/", views.revision_pdf_internal, name="pdf_internal"),
    path("revisions/<int:pk>/pdf/status/", views.revision_pdf_status, name="pdf_status"),
    path("revisions/<int:pk>/pdf/render/", views.revision_pdf_render, name="pdf_render"),
    path("revisions/<int:pk>/pdf/retry/", views.revision_pdf_retry, name="pdf_retry"),
    path("revisions/<int:pk>/xlsx/", views.revision_xlsx_download, name="xlsx"),
    path("revisions/<int:pk>/bundle/", views.revision_bundle_download, name="bundle"),
]
