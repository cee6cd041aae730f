"""preemption."""
