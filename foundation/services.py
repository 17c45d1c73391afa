"""The foundation's writes live with what they write, each a building block the apps call:
``accounting.record_call`` (a model call), ``queues.enqueue`` and ``queues.queued_tasks_send`` (work
for the workers), ``embedding`` (vectors for every embeddable row). Business rules are the apps' own
``services``."""
