"""The test suite: the same PostgreSQL and Redis as development, faster password hashing."""

from config.env import env_str

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = env_str("SECRET_KEY") or "test-only-insecure-key"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
WHITENOISE_USE_FINDERS = True
CACHES["default"]["KEY_PREFIX"] = "recollect-test"  # noqa: F405
CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = "recollect-test:channels"  # noqa: F405
