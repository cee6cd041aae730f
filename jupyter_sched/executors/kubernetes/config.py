"""Frozen configuration of the Kubernetes executor (the edge turns traitlets into this)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from typing import Any

from ...errors import ValidationError
from .quantity import dns_label

__all__ = ["KubernetesConfig", "QueueManager"]


class QueueManager(str, Enum):
    """Who decides where pods go once the Job exists.

    ``none``: our placement pins each Job to the node it chose (node affinity on ``metadata.name``).
    ``kueue``: Jobs are created suspended with ``kueue.x-k8s.io/queue-name``; Kueue admits them
    (unsuspends) and injects its flavor's node selector; we read the admission back.
    ``volcano``: pods use ``schedulerName: volcano``; gangs get a ``PodGroup`` with ``minMember``.
    """

    NONE = "none"
    KUEUE = "kueue"
    VOLCANO = "volcano"


@dataclass(frozen=True, slots=True)
class KubernetesConfig:
    """How jobs become Kubernetes objects.

    Attributes:
        namespace: the shared work namespace (used unless ``namespace_per_user``).
        namespace_per_user: one namespace per user, ``user_namespace_prefix`` + the user name
            as a DNS label (the namespaces must exist; the executor does not create them).
        user_namespace_prefix: prefix of per-user namespaces.
        queue_manager: ``none`` (pin to our node), ``kueue`` or ``volcano``.
        kueue_queue: LocalQueue name template; ``{team}`` and ``{user}`` are substituted.
        volcano_queue: Volcano Queue name template; ``{team}`` and ``{user}`` are substituted.
        default_image: image for jobs that name none (None: such jobs are rejected).
        image_pull_policy: ``IfNotPresent``, ``Always`` or ``Never``.
        service_account: service account of job pods (None: the namespace default).
        ttl_seconds_after_finished: seconds a finished Job stays before Kubernetes deletes it
            (long enough for the executor to read its final status; default 3600).
        preemption_grace_s: ``terminationGracePeriodSeconds`` of job pods (seconds; DESIGN: 60).
        gpu_taint_keys: taint keys GPU nodes carry; GPU work (only) tolerates them.
        priority_class_prefix: PriorityClass name = prefix + ``high|normal|low``.
        rendezvous_port: port gang workers use for rendezvous (``MASTER_PORT``; torch default 29500).
        extra_labels: labels added to every object (e.g. a cost-centre label).
        count_foreign_pods: the inventory counts GPUs of pods we did not create as used.
    """

    namespace: str = "jupyter-sched-work"
    namespace_per_user: bool = False
    user_namespace_prefix: str = "jsched-"
    queue_manager: QueueManager = QueueManager.NONE
    kueue_queue: str = "{team}"
    volcano_queue: str = "{team}"
    default_image: str | None = None
    image_pull_policy: str = "IfNotPresent"
    service_account: str | None = None
    ttl_seconds_after_finished: int = 3600
    preemption_grace_s: int = 60
    gpu_taint_keys: tuple[str, ...] = ("nvidia.com/gpu",)
    priority_class_prefix: str = "jupyter-sched-"
    rendezvous_port: int = 29500
    extra_labels: Mapping[str, str] = field(default_factory=dict)
    count_foreign_pods: bool = True

    def __post_init__(self) -> None:
        if dns_label(self.namespace) != self.namespace:
            raise ValidationError(f"namespace {self.namespace!r} is not a DNS-1123 label",
                                  field="kubernetes.namespace", hint="use lowercase letters, digits and '-'")
        if self.image_pull_policy not in ("IfNotPresent", "Always", "Never"):
            raise ValidationError(f"image_pull_policy must be IfNotPresent, Always or Never "
                                  f"(got {self.image_pull_policy!r})", field="kubernetes.image_pull_policy",
                                  hint="use IfNotPresent")
        for name, value in (("ttl_seconds_after_finished", self.ttl_seconds_after_finished),
                            ("preemption_grace_s", self.preemption_grace_s)):
            if value < 0:
                raise ValidationError(f"{name} must be >= 0 (got {value})", field=f"kubernetes.{name}",
                                      hint="give seconds, e.g. 60")
        if not 1 <= self.rendezvous_port <= 65535:
            raise ValidationError(f"rendezvous_port must be 1..65535 (got {self.rendezvous_port})",
                                  field="kubernetes.rendezvous_port", hint="use 29500")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> KubernetesConfig:
        """Build from plain config (e.g. a traitlets ``Dict``), field names as above.

        Raises:
            ValidationError: an unknown key or a bad value (naming ``kubernetes.<key>``).
        """
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise ValidationError(f"unknown Kubernetes setting {unknown[0]!r}", field=f"kubernetes.{unknown[0]}",
                                  hint="known: " + ", ".join(sorted(known)))
        values = dict(raw)
        if "queue_manager" in values:
            try:
                values["queue_manager"] = QueueManager(values["queue_manager"])
            except ValueError:
                raise ValidationError(f"queue_manager must be none, kueue or volcano (got {values['queue_manager']!r})",
                                      field="kubernetes.queue_manager", hint="use none, kueue or volcano") from None
        if "gpu_taint_keys" in values:
            values["gpu_taint_keys"] = tuple(values["gpu_taint_keys"])
        try:
            return cls(**values)
        except TypeError as exc:
            raise ValidationError(f"bad Kubernetes settings: {exc}", field="kubernetes",
                                  hint="check the value types") from None

    def namespace_for(self, user: str) -> str:
        """The namespace a user's work goes to."""
        if not self.namespace_per_user:
            return self.namespace
        return dns_label(user, prefix=self.user_namespace_prefix)

    def queue_name(self, template: str, *, team: str, user: str) -> str:
        """Render a queue template (``{team}``, ``{user}``) into a DNS label."""
        return dns_label(template.format(team=team, user=user))
