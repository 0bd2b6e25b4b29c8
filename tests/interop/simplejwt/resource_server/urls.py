"""Routes: an authenticated view and simplejwt's refresh and verify views
at their usual paths."""
from django.urls import path
from rest_framework_simplejwt.views import TokenRefreshView, TokenVerifyView

from .views import Me

urlpatterns = [
    path("api/me/", Me.as_view(), name="me"),
    path("api/token/refresh/", TokenRefreshView.as_view(), name="token_refresh"),
    path("api/token/verify/", TokenVerifyView.as_view(), name="token_verify"),
]
