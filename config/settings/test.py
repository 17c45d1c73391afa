"""The test suite: the same PostgreSQL and Redis as development, faster password hashing."""

import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from config.env import env_str

from .base import *  # noqa: F403

DEBUG = False
SECRET_KEY = env_str("SECRET_KEY") or "test-only-insecure-key"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
WHITENOISE_USE_FINDERS = True
# Tests use their own Redis database, so a development worker never picks up a test's task.
REDIS_URL = urlunsplit(urlsplit(REDIS_URL)._replace(path="/1"))  # noqa: F405
CACHES["default"].update(LOCATION=REDIS_URL, KEY_PREFIX="recollect-test")  # noqa: F405
CHANNEL_LAYERS["default"]["CONFIG"].update(  # noqa: F405
    hosts=[{"address": REDIS_URL, "socket_timeout": None}], prefix="recollect-test:channels"
)
CELERY_BROKER_URL = CELERY_RESULT_BACKEND = REDIS_URL
# No process of the test run itself warms up in a thread of its own beside the tests (servers the tests
# start run with the development settings, and do).
WARM_UP_AT_START = False
# Tasks run inline in unit tests; tests that need the real worker start one (see tests/config/test_stack.py).
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True

# Uploaded files of tests go to a throwaway folder, not var/media.
MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="recollect-test-media-"))
# Every in-process socket of the suite comes from one address: one test's refused keys must not refuse
# another test's good ones. The throttle's own tests set the production rate back.
REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"] = {  # noqa: F405
    **REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"],  # noqa: F405
    "ws_token": "100000/min",
}
