"""quota."""
