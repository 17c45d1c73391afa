"""admin: to be filled."""
