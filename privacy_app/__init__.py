"""A person's data as a whole: exported in one archive, imported on this server or another, and erased
with a receipt that says what went."""
