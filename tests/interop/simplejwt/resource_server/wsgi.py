"""WSGI entry point (gunicorn resource_server.wsgi)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "resource_server.settings")
application = get_wsgi_application()
