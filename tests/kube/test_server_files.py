"""The deployment files in server/: built-in kinds pass the official schema (strict); Kueue CRDs, for
which kubernetes-validate ships no schema, are checked structurally; RBAC is least privilege."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from jupyter_sched.executors.kubernetes import KubernetesConfig
from jupyter_sched.model import PriorityClass

from .kube_builders import K8S_VERSION, quantity_problems

SERVER = Path(__file__).resolve().parents[2] / "server"
YAML_FILES = sorted(SERVER.glob("*.yaml"))
CRD_GROUPS = ("kueue.x-k8s.io/", "scheduling.volcano.sh/")


def _documents() -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for path in YAML_FILES:
        for doc in yaml.safe_load_all(path.read_text()):
            if doc:
                docs.append((f"{path.name}:{doc['kind']}/{doc['metadata']['name']}", doc))
    return docs


DOCS = _documents()


def test_server_has_the_expected_files() -> None:
    assert {p.name for p in YAML_FILES} >= {"rbac.yaml", "priorityclasses.yaml", "kueue-queues.yaml",
                                            "hub-service.yaml", "namespace.yaml"}


@pytest.mark.parametrize("doc", [d for _, d in DOCS if not d["apiVersion"].startswith(CRD_GROUPS)],
                         ids=[i for i, d in DOCS if not d["apiVersion"].startswith(CRD_GROUPS)])
def test_builtin_kinds_pass_the_schema(doc: dict[str, Any]) -> None:
    kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
    assert quantity_problems(doc) == []


KUEUE_SPEC_KEYS = {
    "ResourceFlavor": {"nodeLabels", "nodeTaints", "tolerations", "topologyName"},
    "ClusterQueue": {"cohort", "namespaceSelector", "queueingStrategy", "preemption", "resourceGroups",
                     "flavorFungibility", "fairSharing", "stopPolicy", "admissionChecks"},
    "LocalQueue": {"clusterQueue", "stopPolicy"},
}


@pytest.mark.parametrize("doc", [d for _, d in DOCS if d["apiVersion"].startswith(CRD_GROUPS)],
                         ids=[i for i, d in DOCS if d["apiVersion"].startswith(CRD_GROUPS)])
def test_kueue_objects_are_structurally_sound(doc: dict[str, Any]) -> None:
    # kubernetes-validate has no schema for CRDs: check the fields we use against Kueue v1beta1.
    assert doc["apiVersion"] == "kueue.x-k8s.io/v1beta1"
    assert set(doc["spec"]) <= KUEUE_SPEC_KEYS[doc["kind"]]
    if doc["kind"] == "ClusterQueue":
        for group in doc["spec"]["resourceGroups"]:
            covered = group["coveredResources"]
            for flavor in group["flavors"]:
                assert [r["name"] for r in flavor["resources"]] == covered
                for resource in flavor["resources"]:
                    assert quantity_problems({"resources": {"limits": {"x": str(resource["nominalQuota"])}}}) == []
                    assert set(resource) <= {"name", "nominalQuota", "borrowingLimit", "lendingLimit"}


def test_kueue_local_queues_point_at_cluster_queues_and_flavors_exist() -> None:
    kinds: dict[str, dict[str, dict[str, Any]]] = {}
    for _, doc in DOCS:
        kinds.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    for queue in kinds["LocalQueue"].values():
        assert queue["spec"]["clusterQueue"] in kinds["ClusterQueue"]
        assert queue["metadata"]["namespace"] == KubernetesConfig().namespace
    for cq in kinds["ClusterQueue"].values():
        for group in cq["spec"]["resourceGroups"]:
            assert {f["name"] for f in group["flavors"]} <= set(kinds["ResourceFlavor"])


def test_priority_classes_match_the_executor_names() -> None:
    classes = {doc["metadata"]["name"]: doc for _, doc in DOCS if doc["kind"] == "PriorityClass"}
    prefix = KubernetesConfig().priority_class_prefix
    assert set(classes) == {f"{prefix}{p.value}" for p in PriorityClass}
    values = [classes[f"{prefix}{p.value}"]["value"] for p in (PriorityClass.HIGH, PriorityClass.NORMAL,
                                                                PriorityClass.LOW)]
    assert values == sorted(values, reverse=True)
    assert classes[f"{prefix}low"]["preemptionPolicy"] == "Never"


def test_rbac_is_least_privilege() -> None:
    roles = {doc["kind"]: doc for _, doc in DOCS if doc["kind"] in ("Role", "ClusterRole")}
    granted: dict[str, set[str]] = {}
    for kind, role in roles.items():
        for rule in role["rules"]:
            assert "*" not in rule["verbs"] and "*" not in rule["resources"] and "*" not in rule["apiGroups"]
            for resource in rule["resources"]:
                granted.setdefault(f"{kind}:{resource}", set()).update(rule["verbs"])
    assert granted["ClusterRole:nodes"] == {"get", "list", "watch"}
    assert granted["ClusterRole:pods"] == {"get", "list", "watch"}
    assert granted["Role:jobs"] == {"get", "list", "watch", "create", "delete"}
    assert granted["Role:pods/log"] == {"get"}
    assert granted["Role:events"] == {"get", "list", "watch"}
    # each job's own token Secret (session 21): made, owned, deleted — never listed or watched
    assert granted.pop("Role:secrets") == {"get", "create", "patch", "delete"}
    assert not any(r.split(":")[1] in ("secrets", "configmaps", "pods/exec") for r in granted)
    assert roles["Role"]["metadata"]["namespace"] == KubernetesConfig().namespace
    bindings = [doc for _, doc in DOCS if doc["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    accounts = {(d["metadata"]["name"], d["metadata"]["namespace"]) for _, d in DOCS if d["kind"] == "ServiceAccount"}
    for binding in bindings:
        for subject in binding["subjects"]:
            assert (subject["name"], subject["namespace"]) in accounts


def test_hub_service_runs_as_the_service_account() -> None:
    deployment = next(d for _, d in DOCS if d["kind"] == "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "jupyter-sched"
    assert pod["containers"][0]["command"][:2] == ["jupyter-sched", "serve"]


class _Section(dict[str, Any]):
    def __getattr__(self, name: str) -> Any:
        return self.setdefault(name, _Section())

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


@pytest.mark.parametrize("name", ["jupyter_server_config.py", "jupyterhub_config.py"])
def test_python_config_examples_run(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_HUB_TOKEN", "test-token")
    config = _Section()
    exec(compile((SERVER / name).read_text(), name, "exec"), {"get_config": lambda: config})
    if name == "jupyter_server_config.py":
        from jupyter_sched.extension.app import SchedApp

        known = set(SchedApp.class_trait_names(config=True))
        assert set(config["SchedApp"]) <= known
    else:
        (service,) = [s for s in config["JupyterHub"]["services"] if s["name"] == "jupyter-sched"]
        assert service["url"].endswith(":10101")


def test_namespaces_enforce_the_restricted_pod_security_profile() -> None:
    namespaces = [doc for _, doc in DOCS if doc["kind"] == "Namespace"]
    assert {ns["metadata"]["name"] for ns in namespaces} == {"jupyter-sched", "jupyter-sched-work"}
    for ns in namespaces:
        labels = ns["metadata"]["labels"]
        assert labels["pod-security.kubernetes.io/enforce"] == "restricted"
        assert labels["pod-security.kubernetes.io/warn"] == "restricted"


def test_the_service_takes_its_secrets_from_the_environment_never_its_command_line() -> None:
    deployment = next(doc for _, doc in DOCS if doc["kind"] == "Deployment" and doc["metadata"]["name"] == "jupyter-sched")
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    argv = " ".join(container.get("command", []) + container.get("args", []))
    assert "db_url" not in argv and "$(" not in argv and "token" not in argv.lower()
    secret_env = {e["name"] for e in container["env"] if "secretKeyRef" in e.get("valueFrom", {})}
    assert secret_env == {"JUPYTERHUB_API_TOKEN", "JUPYTER_SCHED_DB_URL"}
    # restricted Pod Security (server/namespace.yaml) admits it
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}


def test_newuser37_nit3_the_hub_managed_service_example_gives_the_hub_time_to_see_it_start() -> None:
    """JupyterHub exits when a managed service does not answer within its ``timeout`` (30 s by default); the service's
    start took ~40 s on a loaded 2-core host (newuser37 n3). The commented ``"command"`` form sets a longer one that
    this JupyterHub's Service accepts."""
    from jupyterhub.services.service import Service

    text = (SERVER / "jupyterhub_config.py").read_text()
    managed = text[text.index('# {"name": "jupyter-sched", "command"'):text.index("]\n", text.index('"command"'))]
    timeout = re.search(r'"timeout": (\d+)', managed)
    assert timeout is not None and int(timeout.group(1)) >= 120, managed
    assert "timeout" in Service.class_trait_names()
    assert '"timeout": 120' in (SERVER.parent / "docs" / "admin.md").read_text()
