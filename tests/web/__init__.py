"""Tests of the REST surface (server extension) and the CLI."""
