"""selectors: to be filled."""
