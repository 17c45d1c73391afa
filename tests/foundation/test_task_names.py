"""Task names are contracts: a job is queued, routed and stored (while the broker is down) by name, so a
name that no task answers to would send work nowhere. Every name comes from ``foundation.task_names``."""

from foundation import queues, task_names
from foundation.celery import BULK_QUEUE, INTERACTIVE_QUEUE, app

# The apps whose workers' jobs are ours; Celery's own tasks (celery.*) are not named by us.
OWN_PREFIXES = ("sessions.", "documents.", "core.", "privacy.", "retrieval.")


def _registered() -> set[str]:
    app.loader.import_default_modules()  # what a worker imports when it starts
    return set(app.tasks)


def test_every_routed_name_is_a_registered_task():
    routed = set(app.conf.task_routes)
    assert routed, "bulk work has routes"
    assert routed <= _registered(), f"routed but not registered: {sorted(routed - _registered())}"


def test_every_name_in_the_registry_is_a_registered_task():
    missing = task_names.ALL_TASKS - _registered()
    assert not missing, f"named but not registered: {sorted(missing)}"


def test_every_task_of_ours_is_named_in_the_registry():
    ours = {name for name in _registered() if name.startswith(OWN_PREFIXES)}
    assert ours == task_names.ALL_TASKS


def test_bulk_work_goes_to_the_bulk_queue_and_the_rest_to_the_interactive_one():
    for name in task_names.ALL_TASKS:
        queue = app.amqp.router.route({}, name)["queue"].name
        assert queue == (BULK_QUEUE if name in task_names.BULK_TASKS else INTERACTIVE_QUEUE), name


def test_a_queued_job_resolves_to_the_task_of_that_name():
    for name in task_names.ALL_TASKS:
        assert queues._task(name).name == name
