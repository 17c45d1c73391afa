"""URL configuration: the API under /api/, the admin, the schema and its browsable docs."""

from django.contrib import admin
from django.urls import include, path, re_path
from django.views.generic import RedirectView, TemplateView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView

from accounts_app.api import MeView, TokenView
from accounts_app.views import LoginView as SignInView
from foundation.api import HealthView, api_not_found
from integrations_app.mcp_server import RESOURCE_METADATA_PATH, ProtectedResourceMetadataView
from integrations_app.urls import openai_patterns
from privacy_app.erasure_api import MyDataView
from web_app.views import ChatPageView, LogoutView

api_patterns = [
    path("health", HealthView.as_view(), name="health"),
    path("auth/token", TokenView.as_view(), name="auth-token"),
    path("me", MeView.as_view(), name="me"),
    # Erasure (privacy_app): a person's own data, with a receipt.
    path("me/data", MyDataView.as_view(), name="me-data"),
    path("schema/", SpectacularAPIView.as_view(), name="schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="schema"), name="redoc"),
    path("", include("sessions_app.api.urls")),
    path("", include("documents_app.api.urls")),
    path("", include("retrieval_app.api.urls")),
    path("", include("chat_app.api.urls")),
    # A person's data as a whole: export and import.
    path("", include("privacy_app.api")),
    # Anything else under /api/ answers in the API's error shape, whatever DEBUG is.
    re_path(r"^.*$", api_not_found),
]

# Admin pages of models that moved to the app they now belong to: old links and bookmarks still land.
MOVED_ADMIN = {"modelcall": "foundation", "queuedtask": "foundation", "apitoken": "accounts_app"}


class MovedAdminPage(RedirectView):
    """An old admin address, for reading: it answers where the page is now (the admin there decides
    who may see it)."""

    permanent = True
    query_string = True
    http_method_names = ["get", "head"]


moved_admin_patterns = [
    re_path(
        rf"^admin/retrieval_app/{model}/(?P<rest>.*)$", MovedAdminPage.as_view(url=f"/admin/{app}/{model}/%(rest)s")
    )
    for model, app in MOVED_ADMIN.items()
]

urlpatterns = [
    path("", TemplateView.as_view(template_name="index.html"), name="home"),
    path("chat/", ChatPageView.as_view(), name="chat-page"),
    path("accounts/login/", SignInView.as_view(), name="login"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("", include("web_app.urls")),
    path("", include("accounts_app.urls")),
    path("admin/ops/", include("operations_app.urls")),
    *moved_admin_patterns,
    path("admin/", admin.site.urls),
    path("api/", include(api_patterns)),
    # The MCP server's OAuth protected-resource metadata (RFC 9728), at both places clients look for it.
    path(RESOURCE_METADATA_PATH.lstrip("/"), ProtectedResourceMetadataView.as_view(), name="mcp-resource-metadata"),
    path(RESOURCE_METADATA_PATH.lstrip("/") + "/mcp", ProtectedResourceMetadataView.as_view()),
    # The OpenAI-compatible API, for chat front-ends and SDKs (integrations_app.openai_api).
    path("v1/", include(openai_patterns)),
]

admin.site.site_header = "Recollect administration"
admin.site.site_title = "Recollect"

handler500 = "foundation.api.server_error"
