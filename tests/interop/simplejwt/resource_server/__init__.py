"""A minimal SUAP-side resource server: Django REST framework with stock
djangorestframework-simplejwt settings, sharing credencial's HS256 secret."""
