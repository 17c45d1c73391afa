"""A second labelled set for cross-session recall, written the way real chat logs and their questions read.
(Described in full once the set is complete.)"""
