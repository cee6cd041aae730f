"""extension."""
