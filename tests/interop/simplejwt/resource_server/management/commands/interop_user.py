"""`manage.py interop_user ID`: makes sure Django's user table has a user
with primary key ID (simplejwt's JWTAuthentication and TokenRefreshView look
the token's user_id up there)."""
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create (or keep) the Django user whose id is credencial's user_id."

    def add_arguments(self, parser):
        parser.add_argument("user_id", type=int)

    def handle(self, *args, user_id, **options):
        user, _ = get_user_model().objects.get_or_create(
            pk=user_id, defaults={"username": f"credencial-{user_id}"}
        )
        self.stdout.write(str(user.pk))
