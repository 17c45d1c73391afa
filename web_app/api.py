"""The browser app has no API of its own: its scripts call the apps' APIs under ``/api/``."""
