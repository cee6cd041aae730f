"""inventory."""
