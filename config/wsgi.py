"""WSGI entry point, for plain HTTP deployments (websockets need the ASGI one); DJANGO_SETTINGS_MODULE must be set."""

from django.core.wsgi import get_wsgi_application

application = get_wsgi_application()
