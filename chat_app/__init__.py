"""Chat: one turn, answered over three transports (JSON, server-sent events, the websocket).

- ``services``: the turn itself, from the user's message to the recorded answer;
- ``prompt``: the prompt within its token budgets;
- ``relevance``: how relevant each passage found is, judged; ``mood``: how far an answer can be leaned on;
- ``answer``: the built-in answer engine, with ``quotes`` (what it quotes of a passage) and ``speech``
  (what a message is, and how what was noted is said back);
- ``concurrency`` and ``streaming``: cancellation, the bounds on concurrent turns, and the bridge from
  the synchronous turn to async transports;
- ``events``: the event names and their frames.
- ``consumers``: the websocket; ``api``: the JSON and server-sent events endpoints.
"""
