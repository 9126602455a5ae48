"""Settings for the inference-cluster configurator.

Everything comes from the environment.  With nothing set the app runs
"embedded": SQLite in the project folder, Celery tasks executed eagerly in
the web process, DEBUG off.  ``DJANGO_ENV=production`` switches to the
production profile, which refuses to start unless SECRET_KEY, ALLOWED_HOSTS,
DATABASE_URL and CELERY_BROKER_URL are all given, and which passes
``manage.py check --deploy``.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from config.cores import available_cores, env_int

BASE_DIR = Path(__file__).resolve().parent.parent

DJANGO_ENV = os.environ.get("DJANGO_ENV", "embedded").strip().lower()
if DJANGO_ENV not in {"embedded", "production"}:
    raise ImproperlyConfigured(f"DJANGO_ENV must be 'embedded' or 'production', not {DJANGO_ENV!r}.")
PRODUCTION = DJANGO_ENV == "production"


def _env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def _required(name: str) -> str:
    value = os.environ.get(name, "").strip()
    if not value:
        raise ImproperlyConfigured(
            f"{name} must be set when DJANGO_ENV=production (see README, 'Production stack')."
        )
    return value


# Placeholder keys that must never sign production sessions: the example in
# deploy/production.env.example and the embedded-mode default below.
EXAMPLE_SECRET_KEY_PREFIXES = ("change-me", "embedded-only-not-secret-")


def _production_secret_key() -> str:
    key = _required("SECRET_KEY")
    if key.lower().startswith(EXAMPLE_SECRET_KEY_PREFIXES):
        raise ImproperlyConfigured(
            "SECRET_KEY is still the example value from deploy/production.env.example; set a long random "
            "key (e.g. python -c 'import secrets; print(secrets.token_urlsafe(50))')."
        )
    return key


if PRODUCTION:
    SECRET_KEY = _production_secret_key()
    ALLOWED_HOSTS = [h.strip() for h in _required("ALLOWED_HOSTS").split(",") if h.strip()]
    # The container health check calls /healthz on the loopback address.
    ALLOWED_HOSTS += ["127.0.0.1", "localhost"]
    DATABASE_URL = _required("DATABASE_URL")
    CELERY_BROKER_URL = _required("CELERY_BROKER_URL")
    DEBUG = False
else:
    # A fixed development key is fine for the embedded mode: it never leaves the
    # developer's machine, and production refuses to start without its own key.
    SECRET_KEY = os.environ.get("SECRET_KEY") or "embedded-only-not-secret-" + "x" * 40
    ALLOWED_HOSTS = [
        h.strip()
        for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver").split(",")
        if h.strip()
    ]
    DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
    CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "").strip()
    DEBUG = _env_bool("DEBUG", False)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "import_export",
    "simple_history",
    "axes",
    "accounts",
    "catalog",
    "configurator",
    "quotes",
    "proposals",
    "documents",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "configurator.middleware.BodyLimitMiddleware",  # JSON 413 before a body over the limit is read
    "config.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "configurator.port.cache.VersionPerRequest",  # the catalog version read once a request
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "config.csp.csp_nonce",
                "quotes.context_processors.workflow_nav",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"

if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            # Wait for a writer rather than failing with "database is locked".
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "login"

# Login throttling: five failures lock the user name + address for 15 minutes.
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = 0.25  # hours
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_ENABLED = _env_bool("AXES_ENABLED", True)
# Behind a reverse proxy, name it here (comma-separated addresses or networks, e.g.
# "172.16.0.0/12") so lock-outs key on the real client, not the proxy (accounts/client_ip.py).
TRUSTED_PROXIES = [p.strip() for p in os.environ.get("TRUSTED_PROXIES", "").split(",") if p.strip()]
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy, strict=False)
    except ValueError as _exc:
        raise ImproperlyConfigured(
            f"TRUSTED_PROXIES: {_proxy!r} is not an address or network ({_exc})."
        ) from _exc
AXES_CLIENT_IP_CALLABLE = "accounts.client_ip.client_ip"

LANGUAGE_CODE = "zh-hans"
LANGUAGES = [("zh-hans", _("Simplified Chinese")), ("en", _("English"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("TIME_ZONE", "Asia/Shanghai")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
# Embedded mode serves static files straight from the app folders (no collectstatic).
WHITENOISE_USE_FINDERS = not PRODUCTION
WHITENOISE_AUTOREFRESH = not PRODUCTION
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "media"))
MEDIA_URL = "/media/"  # never served directly: downloads go through permission-checked views

# Uploads (config.json, CSV/XLSX imports) are small; refuse anything large.
DATA_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
DATA_UPLOAD_MAX_NUMBER_FIELDS = 2000

# Plans and auto-planner searches computed once per request and catalog version
# (configurator/port/plan_cache.py): an in-process LRU always; with a Redis broker also the "plans" cache,
# shared by every web worker and the Celery worker (PLAN_CACHE_URL overrides the Redis it uses).
PLAN_CACHE_URL = os.environ.get("PLAN_CACHE_URL", "").strip() or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else ""
)
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if PLAN_CACHE_URL:
    CACHES["plans"] = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": PLAN_CACHE_URL,
        "KEY_PREFIX": "plans",
        "TIMEOUT": 3600,
        "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
    }

# Celery: no broker means eager execution inside the request (embedded mode).
CELERY_TASK_ALWAYS_EAGER = not CELERY_BROKER_URL
CELERY_TASK_EAGER_PROPAGATES = False
CELERY_BROKER_URL = CELERY_BROKER_URL or "memory://"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the job to be redelivered
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A PDF render holds one core for about a second: half the cores (at least one) render at once, so
# the web workers keep the rest (README, "Sizing the server"); CELERY_CONCURRENCY overrides it.
CELERY_WORKER_CONCURRENCY = env_int("CELERY_CONCURRENCY", max(1, available_cores() // 2))
# The processes that render run at a lower scheduling priority (nice 10; CELERY_NICE overrides it, 0 keeps
# the worker's): an engineer's page is answered before a background PDF, which takes the cores the web
# leaves idle (config/celery.py).
CELERY_WORKER_NICE = env_int("CELERY_NICE", 10)
CELERY_BROKER_CONNECTION_TIMEOUT = 2
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A job whose worker died is redelivered after this many seconds.  Rendering
# takes seconds and the task is idempotent, so ten minutes is ample and stays
# above the longest retry count-down (5 minutes at most).
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 600, "max_retries": 1}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

# Security headers everywhere; the transport-level ones in production.
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
if PRODUCTION:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = _env_bool("SECURE_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000"))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    CSRF_TRUSTED_ORIGINS = [
        o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()
    ]
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        "weasyprint": {"level": "WARNING"},
        "fontTools": {"level": "WARNING"},
    },
}

# Quotes: a discount above this fraction needs a sales manager's approval.
QUOTE_DISCOUNT_APPROVAL_THRESHOLD = os.environ.get("QUOTE_DISCOUNT_APPROVAL_THRESHOLD", "0.10")
QUOTE_VALIDITY_DAYS = int(os.environ.get("QUOTE_VALIDITY_DAYS", "30"))

# Proposal PDFs (documents/pdf/jobs.py): renders queued or running per user at once, and the
# largest deployment rendered (a 1,024-node proposal ran to 220 pages in 47 s, issue 13).
PDF_MAX_ACTIVE_PER_USER = int(os.environ.get("PDF_MAX_ACTIVE_PER_USER", "2"))
PDF_MAX_NODES = int(os.environ.get("PDF_MAX_NODES", "256"))

# Sales workflow (quotes/workflow/notify.py, quotes/workflow/changes.py).  E-mail: the console
# backend in embedded mode (notices print to the log); SMTP from the
# environment in production.  SITE_URL makes the links in e-mails absolute.
EMAIL_BACKEND = os.environ.get(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend"
    if PRODUCTION
    else "django.core.mail.backends.console.EmailBackend",
)
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = _env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "quotes@localhost")
# Without SITE_URL the links are built from the first named host (https behind the documented
# proxy in production; the development server's address in embedded mode), never left relative.
_first_host = next((h for h in ALLOWED_HOSTS if h not in ("*",) and not h.startswith(".")), "localhost")
SITE_URL = os.environ.get("SITE_URL", "") or (
    f"https://{_first_host}" if PRODUCTION else f"http://{_first_host}:8000"
)
QUOTE_SHARE_DAYS = int(os.environ.get("QUOTE_SHARE_DAYS", "30"))  # a customer link expires after this
