"""backfill."""
