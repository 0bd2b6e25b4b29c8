"""Settings of the interop resource server.

Stock Django REST framework and djangorestframework-simplejwt: the only
SIMPLE_JWT setting is SIGNING_KEY, credencial's shared HS256 secret
(SERVICE_JWT_SECRET), as a SUAP-side API that trusts credencial's tokens
would configure it. Everything else (algorithm HS256, no AUDIENCE or ISSUER,
token_type claim, user_id claim looked up in Django's own user table) is
simplejwt's default.
"""
import os

SECRET_KEY = os.environ["INTEROP_DJANGO_SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
USE_TZ = True

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "rest_framework",
    "resource_server",
]
MIDDLEWARE = []
ROOT_URLCONF = "resource_server.urls"
WSGI_APPLICATION = "resource_server.wsgi.application"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ["INTEROP_DJANGO_DB"],
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": (
        "rest_framework_simplejwt.authentication.JWTAuthentication",
    ),
}

SIMPLE_JWT = {
    "SIGNING_KEY": os.environ["SERVICE_JWT_SECRET"],
}
