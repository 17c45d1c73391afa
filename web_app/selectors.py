"""The pages read through the apps' own selectors (a conversation for its page, a person's documents
and memories for theirs); what changes after a page opens is read by its scripts through the API."""
