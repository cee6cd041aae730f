"""Helpers of the build and the test command (not part of the installed package)."""
