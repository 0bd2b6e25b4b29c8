"""`manage.py mint_tokens ID`: prints, as one JSON object, tokens minted by
simplejwt itself with the shared key: `access` and `refresh` from
AccessToken.for_user / RefreshToken.for_user (user_id written as a string,
as simplejwt 5.5.1 does), and `access_bad_user_id`, an access token whose
user_id is not a number."""
import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from rest_framework_simplejwt.tokens import AccessToken, RefreshToken


class Command(BaseCommand):
    help = "Print simplejwt-minted tokens for the Django user ID."

    def add_arguments(self, parser):
        parser.add_argument("user_id", type=int)

    def handle(self, *args, user_id, **options):
        user = get_user_model().objects.get(pk=user_id)
        bad = AccessToken.for_user(user)
        bad["user_id"] = f"{user_id}a"
        tokens = {
            "access": str(AccessToken.for_user(user)),
            "refresh": str(RefreshToken.for_user(user)),
            "access_bad_user_id": str(bad),
        }
        self.stdout.write(json.dumps(tokens))
