"""The browser app has no rows to administer."""
