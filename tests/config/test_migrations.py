"""The schema: migrations from zero and back, pgvector, vector sizes, and a clean makemigrations."""

import uuid
from decimal import Decimal
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


# The state of a database from before the foundation had an app of its own.
BEFORE_THE_MOVE = {"retrieval_app": "0006", "accounts_app": "0001", "sessions_app": "0001", "documents_app": "0007"}
# Django's own apps, migrated in full as they were then.
DJANGOS_APPS = ("contenttypes", "auth", "admin", "sessions", "authtoken")


def _before_the_move(env: dict[str, str]) -> None:
    for app, *migration in [*((app,) for app in DJANGOS_APPS), *BEFORE_THE_MOVE.items()]:
        result = manage("migrate", app, *migration, "--noinput", env=env)
        assert result.returncode == 0, result.stderr
    # Each migrate made the content types and permissions of the models as its migrations left them:
    # the moved models' under retrieval_app, as in a database of that time.
    labels = _sql(
        env, "SELECT app_label FROM django_content_type WHERE model IN ('modelcall', 'apitoken', 'queuedtask')"
    )
    assert labels == [("retrieval_app",)] * 3


def _sql(env: dict[str, str], statement: str, *params):
    with psycopg.connect(env["DATABASE_URL"], autocommit=True) as conn:
        cursor = conn.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def test_a_database_from_before_the_move_keeps_its_rows_and_permissions(fresh_database):
    env = clean_env(DATABASE_URL=_server_url(fresh_database), DJANGO_SETTINGS_MODULE="config.settings.dev")
    _before_the_move(env)
    _sql(
        env,
        "INSERT INTO auth_user (username, password, is_superuser, is_staff, is_active, first_name, last_name,"
        " email, date_joined) VALUES ('ana', '!', false, true, true, '', '', '', now())",
    )
    ((user_id,),) = _sql(env, "SELECT id FROM auth_user")
    session_id = uuid.uuid4()
    _sql(
        env,
        "INSERT INTO sessions_app_chatsession (id, owner_id, title, agent_id, metadata, created_at, updated_at,"
        " rolling_summary, summary_through_seq) VALUES (%s, %s, '', '', '{}', now(), now(), '', 0)",
        session_id,
        user_id,
    )
    _sql(
        env,
        "INSERT INTO retrieval_app_modelcall (kind, purpose, backend, model, owner_id, session_id, input_count,"
        " input_tokens, output_tokens, cost_usd, latency_ms, attempts, ok, error, created_at) VALUES ('generation',"
        " 'chat', 'litellm', 'm', %s, %s, 1, 10, 5, 0.5, 12, 1, true, '', now())",
        user_id,
        session_id,
    )
    _sql(
        env,
        "INSERT INTO retrieval_app_apitoken (owner_id, name, prefix, key_digest, kind, created_at)"
        " VALUES (%s, 'agent', 'abcd', %s, 'named', now())",
        user_id,
        "0" * 64,
    )
    ((permission_id,),) = _sql(
        env,
        "SELECT p.id FROM auth_permission p JOIN django_content_type c"
        " ON c.id = p.content_type_id WHERE c.app_label = 'retrieval_app' AND p.codename = 'view_modelcall'",
    )
    _sql(env, "INSERT INTO auth_user_user_permissions (user_id, permission_id) VALUES (%s, %s)", user_id, permission_id)

    result = manage("migrate", "--noinput", env=env)
    assert result.returncode == 0, result.stderr

    assert _sql(
        env,
        "SELECT app_label FROM django_content_type WHERE model IN ('modelcall', 'apitoken', 'queuedtask')"
        " ORDER BY model",
    ) == [("accounts_app",), ("foundation",), ("foundation",)]
    held = _sql(
        env,
        "SELECT c.app_label, p.codename FROM auth_user_user_permissions up JOIN auth_permission p"
        " ON p.id = up.permission_id JOIN django_content_type c ON c.id = p.content_type_id",
    )
    assert held == [("foundation", "view_modelcall")]  # the staff member still sees model calls
    assert _sql(env, "SELECT session_id, cost_usd FROM retrieval_app_modelcall") == [(session_id, Decimal("0.5"))]
    assert _sql(env, "SELECT name FROM retrieval_app_apitoken") == [("agent",)]
    # The call's conversation is a plain id now: deleting the conversation no longer needs the call changed.
    _sql(env, "DELETE FROM sessions_app_chatsession")
    assert _sql(env, "SELECT count(*) FROM retrieval_app_modelcall") == [(1,)]
    assert manage("makemigrations", "--check", "--dry-run", env=env).returncode == 0
