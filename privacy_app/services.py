"""services: to be filled."""
