"""The operators' side: the dashboard, readable search traces and sessions, and the admin's
cross-app actions (deleting a user with everything it owns). Staff only."""
