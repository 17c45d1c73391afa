"""The browser app keeps no table of its own: its pages read and write through the apps' APIs."""
