"""Hub-mode rules without a hub: teams from groups, stale leases, where the service listens, CLI errors."""

from __future__ import annotations

import io
from typing import Any

import pytest

pytest.importorskip("jupyterhub", reason="hub mode needs jupyterhub (pip install jupyterhub)")

from jupyter_sched.hub.central import known_teams, stale_leases
from jupyter_sched.hub.identity import ADMIN_SCOPE, HubUser, choose_team, is_admin
from jupyter_sched.hub.serve import SchedOnlyAuthorizer, build_config, listen_address, main


@pytest.mark.parametrize(
    "groups, known, want",
    [
        pytest.param(["zeta", "ml"], {"ml"}, "ml", id="a group that has quotas wins"),
        pytest.param(["zeta", "alpha"], set(), "alpha", id="otherwise the first group by name"),
        pytest.param([], {"ml"}, None, id="no groups means no team from the hub"),
    ],
)
def test_team_from_hub_groups(groups: list[str], known: set[str], want: str | None) -> None:
    assert choose_team(groups, known) == want


def test_known_teams_come_from_quotas_budgets_and_policies() -> None:
    quotas = {"quotas": [{"team": "ml"}], "budgets": [{"team": "cv"}], "teams": [{"team": "nlp"}], "user_teams": {}}
    assert known_teams(quotas) == {"ml", "cv", "nlp"}


@pytest.mark.parametrize(
    "model, want",
    [
        pytest.param({"admin": True}, True, id="a hub admin is a scheduler admin"),
        pytest.param({"admin": False, "scopes": [ADMIN_SCOPE]}, True, id="the custom admin scope makes an admin"),
        pytest.param({"admin": False, "scopes": ["self"]}, False, id="anyone else is not"),
    ],
)
def test_admins_from_the_hub(model: dict[str, Any], want: bool) -> None:
    user = HubUser({"name": "ana", "scopes": model.get("scopes", [])}, admin=model["admin"], groups=["ml"])
    assert is_admin(user) is want
    assert user.hub_groups == ("ml",)


def lease(lid: str, user: str, *, kernel: str | None = "k-1", state: str = "running") -> dict[str, Any]:
    return {"id": lid, "user": user, "kernel_id": kernel, "state": state}


def test_stale_leases_are_live_leases_of_users_without_a_server_with_or_without_a_kernel() -> None:
    leases = [lease("l-1", "ana"), lease("l-2", "bob"), lease("l-3", "bob", kernel=None),
              lease("l-4", "bob", state="cancelled"), lease("l-5", "cid", state="pending")]
    assert [x["id"] for x in stale_leases(leases, active_users={"ana"})] == ["l-2", "l-3", "l-5"]


@pytest.mark.parametrize(
    "env, want",
    [
        pytest.param({"JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:10101",
                      "JUPYTERHUB_SERVICE_PREFIX": "/services/jupyter-sched/"},
                     ("127.0.0.1", 10101, "/services/jupyter-sched/"), id="url and prefix from the hub"),
        pytest.param({"JUPYTERHUB_SERVICE_URL": "http://0.0.0.0:9000", "JUPYTERHUB_SERVICE_PREFIX": "services/x"},
                     ("0.0.0.0", 9000, "/services/x/"), id="a prefix without slashes is normalized"),
        pytest.param({"JUPYTERHUB_SERVICE_URL": "http://sched"}, ("sched", 80, "/"), id="the scheme's default port"),
    ],
)
def test_listen_address(env: dict[str, str], want: tuple[str, int, str]) -> None:
    assert listen_address(env) == want


def test_listen_address_without_the_hub_environment_is_an_error() -> None:
    with pytest.raises(ValueError, match="JUPYTERHUB_SERVICE_URL"):
        listen_address({})


@pytest.mark.parametrize(
    "env, argv, message",
    [
        pytest.param({}, [], "no store", id="no database url"),
        pytest.param({"JUPYTER_SCHED_DB_URL": "sqlite:///x.db"}, [], "JUPYTERHUB_API_URL",
                     id="no hub api environment"),
        pytest.param({"JUPYTER_SCHED_DB_URL": "sqlite:///x.db", "JUPYTERHUB_API_URL": "http://h/hub/api",
                      "JUPYTERHUB_API_TOKEN": "t"}, [], "JUPYTERHUB_SERVICE_URL", id="nowhere to listen"),
        pytest.param({}, ["--db-url", "postgresql+psycopg://sched:s3cret@db/sched"], "ps",
                     id="a database password on the command line"),
        pytest.param({}, ["--SchedApp.db_url=postgresql+psycopg://sched:s3cret@db/sched"], "JUPYTER_SCHED_DB_URL",
                     id="a database password in a traitlets option"),
        pytest.param({"JUPYTER_SCHED_DB_URL_FILE": "/nonexistent/db-url"}, [], "cannot read the store URL file",
                     id="a store URL file that cannot be read"),
    ],
)
def test_serve_refuses_to_start_with_exit_code_2(monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                                                 argv: list[str], message: str) -> None:
    for name in ("JUPYTER_SCHED_DB_URL", "JUPYTER_SCHED_DB_URL_FILE", "JUPYTERHUB_API_URL", "JUPYTERHUB_API_TOKEN",
                 "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    err = io.StringIO()
    assert main(argv, err=err) == 2
    assert message in err.getvalue()


def test_the_service_config_serves_only_the_scheduler() -> None:
    config = build_config(ip="127.0.0.1", port=1, base_url="/services/s/", db_url="sqlite:///x.db", allow_root=False)
    extensions = config.ServerApp.jpserver_extensions
    assert extensions["jupyter_sched.hub.central"] is True
    assert all(enabled is False for name, enabled in extensions.items() if name != "jupyter_sched.hub.central")
    authorizer = SchedOnlyAuthorizer()
    assert authorizer.is_authorized(None, None, "read", "sched")
    assert not any(authorizer.is_authorized(None, None, "write", r) for r in ("contents", "kernels", "terminals"))


@pytest.mark.parametrize(
    "raw, error",
    [
        pytest.param("jobs", None, id="a table route"),
        pytest.param("jobs/j-0001abc/logs", None, id="a route with an id"),
        pytest.param("http://127.0.0.1:9/steal", "ValidationError", id="an absolute URL"),
        pytest.param("//127.0.0.1:9/x", "ValidationError", id="a network-path reference"),
        pytest.param("../api/kernels", "ValidationError", id="a dot-dot segment"),
        pytest.param("%2e%2e/x", "ValidationError", id="an encoded dot-dot"),
        pytest.param("jobs%2Fx", "ValidationError", id="an encoded slash"),
        pytest.param("..\\x", "ValidationError", id="a backslash"),
        pytest.param("jobs/a/b/c", "NotFoundError", id="well formed but no such route"),
    ],
)
def test_only_relative_routes_of_the_table_are_forwarded(raw: str, error: str | None) -> None:
    from jupyter_sched.errors import SchedError
    from jupyter_sched.hub.forward import forward_path, route_patterns

    routes = route_patterns()
    if error is None:
        assert forward_path(raw, routes) == raw
    else:
        with pytest.raises(SchedError) as refused:
            forward_path(raw, routes)
        assert type(refused.value).__name__ == error and refused.value.field == "path"


def test_the_store_url_comes_from_a_file_before_the_environment(tmp_path: Any) -> None:
    import argparse

    from jupyter_sched.hub.serve import store_url

    secret = tmp_path / "db-url"
    secret.write_text("postgresql+psycopg://sched:s3cret@db/sched\n")
    args = argparse.Namespace(db_url=None, db_url_file=str(secret))
    assert store_url(args, [], {"JUPYTER_SCHED_DB_URL": "sqlite:///other.db"}) == \
        "postgresql+psycopg://sched:s3cret@db/sched"
    assert store_url(argparse.Namespace(db_url="sqlite:///x.db", db_url_file=None), [], {}) == "sqlite:///x.db"


def test_every_documented_route_and_method_is_forwarded_by_user_servers() -> None:
    """Red-team finding: definitions and kept-notebook routes answered 404 through a hub, and
    PATCH 405. Every path and method of openapi.yaml must pass a user server's forwarder."""
    import re
    from pathlib import Path

    import yaml

    import jupyter_sched.extension as extension
    from jupyter_sched.hub.forward import ForwardHandler, forward_path, route_patterns

    document = yaml.safe_load((Path(extension.__file__).parent / "openapi.yaml").read_text())
    routes = route_patterns()
    samples = {"action": "pause"}
    refused = []
    for path, operations in document["paths"].items():
        raw = re.sub(r"\{(\w+)\}", lambda m: samples.get(m.group(1), "x-0001abc"), path.lstrip("/"))
        try:
            forward_path(raw, routes)
        except Exception as exc:  # collected and reported below
            refused.append(f"{path}: {type(exc).__name__}")
        for method in operations:
            if method in {"get", "post", "put", "patch", "delete"} and not hasattr(ForwardHandler, method):
                refused.append(f"{method.upper()} {path}: no forwarding handler method")
    assert refused == []
