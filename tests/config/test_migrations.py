"""The schema: migrations from zero and back, pgvector, vector sizes, and a clean makemigrations."""

import uuid
from urllib.parse import quote

import psycopg
import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from tests.helpers import clean_env, manage

EMBEDDED_TABLES = [
    "sessions_app_message",
    "sessions_app_archive",
    "sessions_app_memory",
    "documents_app_documentnode",
]


def _server_url(dbname: str) -> str:
    params = connection.settings_dict
    host = quote(params["HOST"], safe="") if params["HOST"].startswith("/") else params["HOST"]
    port = f":{params['PORT']}" if params["PORT"] and not params["HOST"].startswith("/") else ""
    password = f":{quote(params['PASSWORD'])}" if params["PASSWORD"] else ""
    return f"postgresql://{params['USER']}{password}@{host}{port}/{dbname}"


@pytest.fixture
def fresh_database():
    """An empty database on the same server, named in DATABASE_URL as an external one would be."""
    name = f"recollect_fresh_{uuid.uuid4().hex[:8]}"
    admin_url = _server_url("postgres")
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield name
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _tables_and_extension(dbname: str) -> tuple[set[str], bool]:
    with psycopg.connect(_server_url(dbname)) as conn:
        tables = {row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}
        has_vector = conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is not None
    return tables, has_vector


def test_migrations_apply_from_zero_and_reverse_on_a_database_named_by_url(fresh_database):
    env = clean_env(DATABASE_URL=_server_url(fresh_database), DJANGO_SETTINGS_MODULE="config.settings.dev")

    forward = manage("migrate", "--noinput", env=env)
    assert forward.returncode == 0, forward.stderr
    tables, has_vector = _tables_and_extension(fresh_database)
    assert has_vector
    assert set(EMBEDDED_TABLES) | {"sessions_app_chatsession", "retrieval_app_searchtrace"} <= tables

    for app in ("documents_app", "retrieval_app", "sessions_app"):
        backward = manage("migrate", app, "zero", "--noinput", env=env)
        assert backward.returncode == 0, backward.stderr
    tables, has_vector = _tables_and_extension(fresh_database)
    assert not {t for t in tables if t.startswith(("sessions_app_", "documents_app_", "retrieval_app_"))}
    assert not has_vector


@pytest.mark.django_db
def test_the_vector_extension_is_installed():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
    major, minor = (int(part) for part in version.split(".")[:2])
    assert (major, minor) >= (0, 8), "iterative index scans need pgvector 0.8"


@pytest.mark.django_db
@pytest.mark.parametrize("table", EMBEDDED_TABLES)
def test_vector_columns_have_the_configured_dimensions_and_a_cosine_hnsw_index(table):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = %s::regclass AND attname = 'embedding'",
            [table],
        )
        (column_type,) = cursor.fetchone()
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s AND indexdef LIKE '%%hnsw%%'", [table])
        index_defs = [row[0] for row in cursor.fetchall()]
    assert column_type == f"vector({settings.EMBEDDING_DIMENSIONS})"
    # Every table has one index over all its vectors; document nodes add one over directories alone.
    full = [d for d in index_defs if " WHERE " not in d]
    assert len(full) == 1 and all("vector_cosine_ops" in d for d in index_defs)


@pytest.mark.django_db
@pytest.mark.parametrize("table", ["sessions_app_message", "sessions_app_memory", "documents_app_documentnode"])
def test_full_text_vectors_are_generated_and_gin_indexed(table):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attgenerated FROM pg_attribute WHERE attrelid = %s::regclass AND attname = 'search_vector'",
            [table],
        )
        (generated,) = cursor.fetchone()
        cursor.execute(
            "SELECT count(*) FROM pg_indexes WHERE tablename = %s AND indexdef LIKE '%%USING gin%%'"
            " AND indexdef NOT LIKE '%%WHERE%%'",
            [table],
        )
        (gin_count,) = cursor.fetchone()
    assert generated == "s"  # stored generated column: always in step with the text, no app code
    assert gin_count == 1


def test_models_and_migrations_agree(db):
    call_command("makemigrations", check=True, dry_run=True, verbosity=0)


def test_a_different_embedding_size_needs_no_new_migration():
    result = manage("makemigrations", "--check", "--dry-run", env=clean_env(EMBEDDING_DIMENSIONS="1536"))
    assert result.returncode == 0, result.stdout + result.stderr
