"""The doors read through the apps' own selectors; ``openai_sessions.agents_of`` (the models ``/v1``
lists) and the session matching read the caller's sessions alone."""
