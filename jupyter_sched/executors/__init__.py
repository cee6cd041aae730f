"""Executors (edge): run admitted work locally (process groups) or on Kubernetes.

:mod:`.base` holds the :class:`Executor` protocol and its events; :mod:`.local` the local
executor. Importing this package stays cheap (the wrapper runs as a plain script).
"""

from .base import Executor, ExecutorEvent, ExecutorHandle, Exited, Lost, NotReady, Ready, Started

__all__ = ["Executor", "ExecutorEvent", "ExecutorHandle", "Exited", "Lost", "NotReady", "Ready", "Started"]
