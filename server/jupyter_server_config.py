"""Example jupyter_server_config.py for the jupyter_sched server extension (embedded mode).

Copy to ~/.jupyter/ (or /etc/jupyter/) and adjust. Every name below is a trait of
jupyter_sched's SchedApp; `jupyter server --help-all | grep SchedApp` lists them with help.
"""

c = get_config()  # type: ignore[name-defined]  # noqa: F821  (provided by traitlets when loaded)

# The extension is enabled by the installed jupyter_server_config.d/jupyter_sched.json;
# this line only makes it explicit.
c.ServerApp.jpserver_extensions = {"jupyter_sched": True}

# Store: "" = SQLite in the Jupyter data dir. A shared PostgreSQL for several servers:
# c.SchedApp.db_url = "postgresql+psycopg://sched:secret@db.example.org:5432/jupyter_sched"

# Inventory: this host's GPUs via NVML, falling back to 4 GPUs labelled "simulated".
c.SchedApp.inventory_source = "auto"
c.SchedApp.simulated_gpus = 4

# Policy: quotas per team in GPUs (Kueue's nominalQuota / borrowingLimit), three priority classes.
c.SchedApp.quotas = [
    {"team": "team-ml", "user": None, "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 2},
    {"team": "team-geo", "user": None, "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 0},
]
c.SchedApp.profiles = {
    "bert-finetune": {"description": "4 GPUs with NVLink, 12 h", "gpus": 4, "mem_per_gpu": "40GiB",
                      "nvlink": True, "time_limit": "12h"},
}
c.SchedApp.preemption_grace_s = 60.0
# Placement: "binpack" (default) keeps whole nodes free for big jobs; on clusters where notebooks
# share GPUs (fractional requests), "fgd-planned" packs shares with less fragmentation.
c.SchedApp.placement_policy = "binpack"

# Kubernetes execution: jobs become batch/v1 Jobs pinned to the node the scheduler chose, and
# the inventory is the cluster's GPU nodes (inventory_source "auto" follows the executor).
# kubeconfig "" = the pod's service account in-cluster, else $KUBECONFIG / ~/.kube/config.
# Cluster objects they need: server/namespace.yaml, rbac.yaml, priorityclasses.yaml
# (and kueue-queues.yaml with a Kueue-managed cluster).
# c.SchedApp.executor = "kubernetes"
# c.SchedApp.kubeconfig = ""
# c.SchedApp.kubernetes = {"namespace": "jupyter-sched-work", "default_image": "python:3.12",
#                          "queue_manager": "none", "preemption_grace_s": 60}
