"""The test suite: the same PostgreSQL and Redis as development, faster password hashing."""

from config.env import env_str

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = env_str("SECRET_KEY") or "test-only-insecure-key"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
WHITENOISE_USE_FINDERS = True
CACHES["default"]["KEY_PREFIX"] = "recollect-test"  # noqa: F405
CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = "recollect-test:channels"  # noqa: F405
# Tasks run inline in unit tests; tests that need the real worker start one (see tests/config/test_stack.py).
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
