"""A process warms up as it starts: the model loaded and run once, each vector index walked, the index files
read ahead where the database keeps them on this machine, the task modules imported, and what it then holds
set aside from Python's collector; a failure only leaves the process cold."""

import gc
import threading

import pytest
from celery import current_app

from foundation import queues, warmup
from foundation.ai.embeddings import embedding_backend

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("collector_restored")]


def test_warming_up_loads_the_model_and_reads_the_index_files_ahead(library):
    done = warmup.warm_up()
    assert embedding_backend()._session is not None, "the model is loaded"
    assert done["index_files"] > 0, "the embedded database's index files were read ahead"
    assert done["model_ms"] >= 0 and done["ms"] >= done["model_ms"]


def test_a_warm_process_queues_its_first_job_without_importing_anything_and_collects_little(monkeypatch):
    imports = []
    real_import = current_app.loader.import_default_modules
    monkeypatch.setattr(queues, "_registered", threading.Event())  # a process that has not yet queued anything
    monkeypatch.setattr(current_app.loader, "import_default_modules", lambda: imports.append(real_import()))
    done = warmup.warm_up()
    assert len(imports) == 1 and done["tasks"] == len(current_app.tasks)
    queues.tasks_register()
    assert len(imports) == 1, "the task modules are imported once per process"
    assert done["settled_objects"] > 10_000 and gc.get_freeze_count() > 10_000, "what the process held is set aside"
    assert gc.get_threshold() == warmup.COLLECTOR_THRESHOLDS
    assert len(gc.get_objects(generation=2)) < done["settled_objects"] // 10, "a full collection walks little"


def test_with_a_model_configured_its_client_is_loaded_without_asking_the_model_anything(hosted_llm):
    done = warmup.warm_up()
    assert done["engine_ms"] >= 0, "the text engine was warmed"
    assert hosted_llm.requests == [], "warming up costs the provider nothing"


def test_a_warm_up_that_fails_leaves_the_process_cold_but_running(monkeypatch):
    def broken(vector):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(warmup, "indexes_warm", broken)
    done = warmup.warm_up()
    assert "index_files" not in done and done["ms"] >= 0


def test_it_runs_in_a_thread_of_its_own_only_when_asked(settings):
    settings.WARM_UP_AT_START = False
    assert warmup.warm_up_in_background() is None


def test_a_process_warming_up_says_so_in_its_health_check_until_it_is_warm(settings, monkeypatch, api_client):
    settings.WARM_UP_AT_START = True
    release = threading.Event()
    monkeypatch.setattr(warmup, "warm_up", lambda: release.wait(10))
    thread = warmup.warm_up_in_background()
    warming = api_client.get("/api/health")
    release.set()
    thread.join(10)
    warm = api_client.get("/api/health")
    assert warming.status_code == 503 and warming.json()["warm"] == {"ok": False}
    assert warm.status_code == 200 and warm.json()["warm"] == {"ok": True}


def test_a_warm_up_that_hangs_does_not_hold_the_process_out_for_good(settings, monkeypatch, api_client):
    settings.WARM_UP_AT_START = True
    release = threading.Event()
    monkeypatch.setattr(warmup, "warm_up", lambda: release.wait(10))
    monkeypatch.setattr(warmup, "WARMING_HELD_S", 0.0)
    thread = warmup.warm_up_in_background()
    try:
        response = api_client.get("/api/health")
    finally:
        release.set()
        thread.join(10)
    assert response.status_code == 200 and response.json()["warm"] == {"ok": True}
