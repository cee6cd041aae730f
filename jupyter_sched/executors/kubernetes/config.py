"""Frozen configuration of the Kubernetes executor (the edge turns traitlets into this)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from enum import Enum
from fnmatch import fnmatchcase
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
        allowed_images: images users may name, as glob patterns (``"registry.example.org/ml/*"``);
            ``default_image`` is always allowed. Default (): only ``default_image``.
        allow_any_image: the admin allows every image (``allowed_images`` is then not consulted).
        volumes: pod volumes every job pod gets (Kubernetes JSON; ``{user}`` in string values is
            the job owner as a DNS label, e.g. ``{"name": "home", "persistentVolumeClaim":
            {"claimName": "claim-{user}"}}`` — zero-to-jupyterhub's home volume).
        volume_mounts: container mounts of those volumes (Kubernetes JSON, ``{user}`` likewise).
        home_mount_path: where the owner's home volume is mounted; ``~`` in a job's working
            directory (sent by ``%%schedule`` through a hub) resolves to it, a relative one is read
            in it (``data`` → ``<home_mount_path>/data``, as the local executor reads it in the
            owner's home), and jobs without a working directory start there. None: no home volume
            (``~`` working dirs are dropped, said in the submit answer's warnings; a relative one is
            refused at submit, 400 ``working_dir``).
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
    allowed_images: tuple[str, ...] = ()
    allow_any_image: bool = False
    volumes: tuple[Mapping[str, Any], ...] = ()
    volume_mounts: tuple[Mapping[str, Any], ...] = ()
    home_mount_path: str | None = None

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
        names = [v.get("name") for v in self.volumes if isinstance(v, Mapping)]
        if len(names) != len(self.volumes) or not all(isinstance(n, str) and n for n in names):
            raise ValidationError("every volume needs a name", field="kubernetes.volumes",
                                  hint='e.g. {"name": "home", "persistentVolumeClaim": {"claimName": "claim-{user}"}}')
        for mount in self.volume_mounts:
            if not isinstance(mount, Mapping) or mount.get("name") not in names or not mount.get("mountPath"):
                raise ValidationError("every volume mount needs the name of a configured volume and a mountPath",
                                      field="kubernetes.volume_mounts",
                                      hint='e.g. {"name": "home", "mountPath": "/home/jovyan"}')
        if self.home_mount_path is not None and not self.home_mount_path.startswith("/"):
            raise ValidationError(f"home_mount_path must be absolute (got {self.home_mount_path!r})",
                                  field="kubernetes.home_mount_path", hint="e.g. /home/jovyan")
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
        for key in ("gpu_taint_keys", "allowed_images", "volumes", "volume_mounts"):
            if key in values:
                if isinstance(values[key], (str, Mapping)) or not isinstance(values[key], (list, tuple)):
                    raise ValidationError(f"{key} must be a list", field=f"kubernetes.{key}",
                                          hint="give a JSON list")
                values[key] = tuple(values[key])
        try:
            return cls(**values)
        except TypeError as exc:
            raise ValidationError(f"bad Kubernetes settings: {exc}", field="kubernetes",
                                  hint="check the value types") from None

    def image_allowed(self, image: str) -> bool:
        """True when users may run ``image`` (see ``allowed_images``)."""
        return (self.allow_any_image or image == self.default_image
                or any(fnmatchcase(image, pattern) for pattern in self.allowed_images))

    def namespace_for(self, user: str) -> str:
        """The namespace a user's work goes to."""
        if not self.namespace_per_user:
            return self.namespace
        return dns_label(user, prefix=self.user_namespace_prefix)

    def queue_name(self, template: str, *, team: str, user: str) -> str:
        """Render a queue template (``{team}``, ``{user}``) into a DNS label."""
        return dns_label(template.format(team=team, user=user))
