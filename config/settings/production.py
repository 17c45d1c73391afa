"""Production: external PostgreSQL + pgvector and Redis, HTTPS, no defaults for secrets.

Refuses to start without SECRET_KEY, DATABASE_URL and REDIS_URL: a deployment must never fall back to
servers embedded in a checkout.
"""

from config.env import check_secret_key, env_bool, env_int, env_required

# Checked before base is imported so that the embedded servers are never started here.
SECRET_KEY = check_secret_key(env_required("SECRET_KEY"))
env_required("DATABASE_URL")
env_required("REDIS_URL")

from .base import *  # noqa: E402, F403

SECRET_KEY = check_secret_key(env_required("SECRET_KEY"))
DEBUG = False

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_CONTENT_TYPE_NOSNIFF = True

STATIC_ROOT = BASE_DIR / "var" / "static"  # noqa: F405  (collectstatic writes here)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
