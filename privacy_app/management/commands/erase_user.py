"""``manage.py erase_user <username>``: erase everything a person owns or that was made from it, and print
the receipt (``privacy_app.erasure``)."""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from privacy_app.erasure import user_data_counts, user_data_erase


class Command(BaseCommand):
    help = (
        "Erase a person's data: conversations, memories, documents and files, traces, tokens and sign-ins. "
        "The account stays, empty, unless --delete-account. Prints the receipt as JSON."
    )

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--delete-account", action="store_true", help="delete the account itself too")
        parser.add_argument("--yes", action="store_true", help="do not ask for confirmation")

    def handle(self, *args, username: str, delete_account: bool, yes: bool, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        if not yes:
            counts = ", ".join(f"{count} {kind}" for kind, count in user_data_counts(user=user).items())
            what = "and the account " if delete_account else ""
            self.stderr.write(f"This erases all data {what}of {username!r} ({counts}). It cannot be undone.")
            if input(f"Type {username} to go ahead: ").strip() != username:
                raise CommandError("Not confirmed; nothing was erased.")
        receipt = user_data_erase(user=user, delete_account=delete_account)
        self.stdout.write(json.dumps(receipt.as_dict(), indent=2))
