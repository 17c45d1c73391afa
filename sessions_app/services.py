"""Writes of sessions and memory: recording, commit, summaries, memories. Each owns its transaction."""
