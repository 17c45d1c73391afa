"""The foundation every app builds on; it imports no app above it.

- ``ai``: the model layer (embeddings, text engines, token counting), with every call accounted for;
- ``accounting``: the record of each model call (tokens, cost, latency, errors);
- ``fields`` and ``vectors``: embedded rows and filtered nearest-neighbour search over them;
- ``embedding``: the one writer of vectors, for every kind of row an app registers as embeddable;
- ``tasks``: the workers' embedding jobs; ``queues``: handing work to the workers, kept in the
  database while the broker is down and sent by the workers' sweep once it is back;
- ``uris``: the ``viking://`` scheme (each app builds and parses its own URIs on top of it);
- ``text``: the full-text search configuration; ``db``: connection handling around long waits;
- ``admin``: admin behaviour shared by every model that carries an embedding;
- ``bm25``: keyword scoring; ``when``: dates in questions; ``tracing``: the stages a request times;
- the API's plumbing: ``api`` (the one place domain errors become HTTP answers, the health endpoint),
  ``exceptions``, ``parsers``, ``schema``, ``security`` (throttles, the pages' policies),
  ``connections`` (database connections held by requests);
- the workers' plumbing: ``celery`` (the Celery app and its queues), ``task_names``, ``health``.

People, sessions and documents are built on it; retrieval, chat, the operators' pages and the browser
app sit on top of them; ``config`` puts the site together.
"""
