"""The resource server's one protected view."""
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response
from rest_framework.views import APIView


class Me(APIView):
    """Answers the authenticated user's id and username (401 without a
    token simplejwt's JWTAuthentication accepts)."""

    permission_classes = [IsAuthenticated]

    def get(self, request):
        return Response({"user_id": request.user.pk, "username": request.user.get_username()})
