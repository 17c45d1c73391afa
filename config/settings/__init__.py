"""Settings family: ``base`` holds everything shared; ``dev``, ``test`` and ``production`` adjust it.

``manage.py`` and the run command default to ``dev``; pytest uses ``test``; a deployment sets
``DJANGO_SETTINGS_MODULE=config.settings.production``.
"""

from pathlib import Path

from dotenv import load_dotenv

# Values in the environment win over a local .env file, so a deployment's own settings are never
# shadowed by a file left in the checkout.
load_dotenv(Path(__file__).resolve().parent.parent.parent / ".env", override=False)
