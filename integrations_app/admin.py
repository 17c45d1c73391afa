"""The doors have no rows to administer: what they record are conversations and memories, shown in
the admin pages of ``sessions_app``."""
