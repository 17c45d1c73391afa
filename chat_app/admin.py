"""Chat has no rows of its own to administer: its turns are shown as conversations, messages and
search traces, in the admin pages of ``sessions_app`` and ``retrieval_app`` and on the operators' pages."""
