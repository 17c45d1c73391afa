"""The operators' view has no API of its own: integrations see their own data through the apps' APIs,
and the service's health is ``GET /api/health`` (``foundation.api``)."""
