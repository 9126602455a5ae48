"""Quote URLs.  The proposal PDF, the workbook and the launch bundle (``documents/urls.py``) join them
in the ``quotes`` namespace in ``config/urls.py``."""

from django.urls import path

from .benchmarks import views as benchmark_views
from .views import approvals, customers, quotes, revisions
from .workflow import views as workflow_views

app_name = "quotes"
urlpatterns = [
    path("", quotes.quote_list, name="list"),
    path("create/", quotes.quote_create, name="create"),
    path("created/<str:key>/", quotes.quote_created_by_key, name="created_by_key"),
    path("customers/", customers.customer_list, name="customers"),
    path("<int:pk>/", quotes.quote_detail, name="detail"),
    path("<int:pk>/edit/", quotes.quote_edit, name="edit"),
    path("<int:pk>/transition/", quotes.quote_transition_view, name="transition"),
    path("<int:pk>/compare/", revisions.revision_compare_view, name="compare"),
    path("revisions/<int:pk>/revise/", revisions.revision_revise, name="revise"),
    path("revisions/<int:pk>/issue/", revisions.revision_issue_view, name="issue"),
    path("revisions/<int:pk>/approve/", approvals.revision_approve_view, name="approve"),
    path("revisions/<int:pk>/reject/", approvals.revision_reject_view, name="reject"),
    path("revisions/<int:pk>/benchmark/", benchmark_views.revision_benchmark_upload, name="benchmark"),
    # The sales workflow (quotes/workflow/views.py).
    path("revisions/<int:pk>/configure/", workflow_views.revision_configure, name="configure"),
    path("revisions/configure/save/", workflow_views.revision_configure_save, name="configure_save"),
    path("revisions/<int:pk>/replan/", workflow_views.revision_replan, name="replan"),
    path("revisions/<int:pk>/clone/", workflow_views.quote_clone_view, name="clone"),
    path("revisions/<int:pk>/share/", workflow_views.share_create_view, name="share_create"),
    path("shares/<int:pk>/revoke/", workflow_views.share_revoke_view, name="share_revoke"),
    path("pipeline/", workflow_views.pipeline_view, name="pipeline"),
    path("pipeline.csv", workflow_views.pipeline_csv_view, name="pipeline_csv"),
    path("notifications/", workflow_views.notifications_view, name="notifications"),
    path("price-impact/", workflow_views.price_impact_view, name="price_impact"),
    # The customer's pages: no log-in, the token is the key.
    path("shared/<str:token>/", workflow_views.share_page, name="share_page"),
    path("shared/<str:token>/proposal.pdf", workflow_views.share_pdf, name="share_pdf"),
    path("shared/<str:token>/accept/", workflow_views.share_accept, name="share_accept"),
    path("shared/<str:token>/question/", workflow_views.share_question, name="share_question"),
]
