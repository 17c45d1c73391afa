"""The operators' pages run nothing in the background: what they show is read when a page opens."""
