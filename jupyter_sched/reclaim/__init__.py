"""reclaim."""
