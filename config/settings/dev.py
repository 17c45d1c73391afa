"""Local development: the defaults a fresh checkout runs with (``make run``)."""

from config.env import env_bool, env_str

from .base import *  # noqa: F403

DEBUG = env_bool("DEBUG", True)
# A fixed key is acceptable only here: dev settings never serve anything but loopback.
SECRET_KEY = env_str("SECRET_KEY") or "dev-only-insecure-key-never-use-in-production"
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True
