"""The operators' pages keep no table of their own: they read every app's rows, and delete a person
with everything they own through those apps' services."""
