"""Queues (pure): ordering of pending work (class, fair share, users, submit time) and time windows."""

from .order import QUEUE_SORTS, QueueContext, QueueSort, fair_order, fair_usage_order, fifo_order, short_first_order
from .windows import TimeWindow, intervals, is_open, next_open

__all__ = ["QUEUE_SORTS", "QueueContext", "QueueSort", "TimeWindow", "fair_order", "fair_usage_order", "fifo_order",
           "intervals", "is_open", "next_open", "short_first_order"]
