"""The browser app changes nothing itself: its scripts call the same API integrations use, and the
account page's forms call ``accounts_app``'s services (tokens, the password)."""
