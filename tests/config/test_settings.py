"""Configuration: production refuses to run without its secrets, the deploy check is clean, flags keep defaults."""

import sys

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config import env
from tests.helpers import clean_env, manage

PRODUCTION = {
    "DJANGO_SETTINGS_MODULE": "config.settings.production",
    "SECRET_KEY": "n7$wq2!x9-long-random-production-secret-key-4f8a1c3e5b7d9f0a2c4e6b8d",
    "DATABASE_URL": "postgres://recollect:secret@db.internal:5432/recollect",
    "REDIS_URL": "redis://cache.internal:6379/0",
    "ALLOWED_HOSTS": "recollect.example.com",
}


@pytest.mark.parametrize("missing", ["SECRET_KEY", "DATABASE_URL", "REDIS_URL"])
def test_production_refuses_to_start_without_its_secrets(missing):
    settings_env = {k: v for k, v in PRODUCTION.items() if k != missing}
    result = manage("check", env=clean_env(**settings_env))
    assert result.returncode != 0
    assert f"The environment variable {missing} must be set" in result.stderr


@pytest.mark.parametrize("weak", ["x", "a" * 80, "dev-only-insecure-key-never-use-in-production-" + "x" * 10])
def test_production_refuses_a_weak_secret_key(weak):
    result = manage("check", env=clean_env(**{**PRODUCTION, "SECRET_KEY": weak}))
    assert result.returncode != 0
    assert "SECRET_KEY must be at least 50 characters" in result.stderr


def test_the_deploy_check_is_clean_under_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=clean_env(**PRODUCTION))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_feature_flags_default_to_seed_001():
    assert settings.ENABLE_QUERY_REWRITING is True
    assert settings.ENABLE_SESSION_MEMORY is True
    assert settings.ENABLE_HISTORY_SUMMARIZATION is True
    assert settings.HISTORY_MAX_TURNS == 10
    assert settings.SESSION_MEMORY_TTL_HOURS == 4


def test_flags_are_read_in_either_spelling(monkeypatch):
    monkeypatch.setenv("enable_query_rewriting", "false")
    assert env.env_bool("ENABLE_QUERY_REWRITING", True) is False
    monkeypatch.setenv("ENABLE_QUERY_REWRITING", "yes")
    assert env.env_bool("ENABLE_QUERY_REWRITING", False) is True


@pytest.mark.parametrize(
    ("reader", "value", "message"),
    [
        (lambda: env.env_bool("X_FLAG", True), "maybe", "is not a boolean"),
        (lambda: env.env_int("X_FLAG", 1), "ten", "is not an integer"),
        (lambda: env.env_int("X_FLAG", 1, minimum=1), "0", "below its minimum"),
        (lambda: env.env_float("X_FLAG", 1.0), "four", "is not a number"),
        (lambda: env.env_float("X_FLAG", 1.0, minimum=0.0), "-0.5", "below its minimum"),
        (lambda: env.env_float("X_FLAG", 1.0, minimum=0.0), "nan", "below its minimum"),
    ],
)
def test_a_malformed_value_names_the_variable(monkeypatch, reader, value, message):
    monkeypatch.setenv("X_FLAG", value)
    with pytest.raises(ImproperlyConfigured, match=f"X_FLAG.*{message}"):
        reader()


def test_the_embedded_redis_serves_celery_channels_and_the_cache_from_one_url():
    assert settings.CELERY_BROKER_URL == settings.REDIS_URL
    assert settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"] == [
        {"address": settings.REDIS_URL, "socket_timeout": None}
    ]
    assert settings.CACHES["default"]["LOCATION"] == settings.REDIS_URL


def test_an_unknown_sign_up_mode_is_refused_at_start():
    result = manage("check", env=clean_env(**PRODUCTION, SIGN_UP_MODE="open"))
    assert result.returncode != 0
    assert "SIGN_UP_MODE='open': choose closed or approval." in result.stderr


@pytest.mark.parametrize("value", ["0", "-1", "inf", "500"])
def test_a_thread_switch_interval_out_of_range_is_refused_at_start(value):
    result = manage("check", env=clean_env(THREAD_SWITCH_INTERVAL_MS=value))
    assert result.returncode != 0
    assert "THREAD_SWITCH_INTERVAL_MS" in result.stderr and "must be above 0 and at most 100" in result.stderr


def test_the_thread_switch_interval_is_set_as_the_app_starts():
    assert sys.getswitchinterval() == pytest.approx(settings.THREAD_SWITCH_INTERVAL_MS / 1000)
