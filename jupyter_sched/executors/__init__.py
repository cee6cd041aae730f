"""executors."""
