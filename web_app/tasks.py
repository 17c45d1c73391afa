"""The browser app runs nothing in the background."""
