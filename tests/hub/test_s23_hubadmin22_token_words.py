"""Hub admin 22's wrong-token probe, the start-up words apart from a hub: a token the hub accepts but that
is not the service's (a user's), or lacks the scopes the service needs, is said at start with the fix; a
hub that does not answer is said as "not checked", and the service starts (the hub may come up later).
The refusal itself is checked on a real hub (test_s23_hubadmin22_service_token.py)."""

from __future__ import annotations

import socket

from jupyter_sched.hub.service_token import TokenCheck, check_token_blocking, start_up_lines

API = "http://127.0.0.1:8081/hub/api"
ALL = ["list:users", "read:groups", "read:hub", "read:servers", "read:users", "read:users:groups", "users:activity"]


def test_s23_hubadmin22_the_services_own_token_with_its_scopes_starts_without_a_word() -> None:
    check = TokenCheck(True, 200, {"kind": "service", "name": "jupyter-sched", "scopes": ALL})
    assert start_up_lines(check, api_url=API, service="jupyter-sched") == (None, [])


def test_s23_hubadmin22_a_users_token_or_missing_scopes_are_warned_with_the_fix() -> None:
    check = TokenCheck(True, 200, {"kind": "user", "name": "boss", "scopes": ["read:users!user=boss", "self"]})
    refusal, warnings = start_up_lines(check, api_url=API, service="jupyter-sched")
    assert refusal is None and len(warnings) == 2
    assert warnings[0].startswith("JUPYTERHUB_API_TOKEN is the token of user 'boss', not of the service "
                                  "'jupyter-sched'") and "Fix: use the api_token of the service" in warnings[0]
    assert "lacks the scope(s) list:users, read:groups, read:servers, users:activity:" in warnings[1]
    assert "c.JupyterHub.load_roles" in warnings[1]


def test_s23_hubadmin22_a_refused_token_stops_the_start_and_names_both_settings() -> None:
    refusal, warnings = start_up_lines(TokenCheck(False, 403), api_url=API, service="jupyter-sched")
    assert refusal is not None and warnings == []
    assert refusal.startswith(f"the hub at {API} refuses this service's API token (403 to GET user): "
                              "JUPYTERHUB_API_TOKEN is not the api_token of the service 'jupyter-sched'")
    assert "Fix: give both the same value" in refusal


def test_s23_hubadmin22_a_hub_that_does_not_answer_is_said_and_the_service_starts() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    check = check_token_blocking(f"http://127.0.0.1:{port}/hub/api", "t", timeout_s=5)
    assert check.accepted is None and check.why.startswith("no answer: ConnectError")
    refusal, warnings = start_up_lines(check, api_url=API, service="jupyter-sched")
    assert refusal is None and len(warnings) == 1
    assert warnings[0].startswith(f"could not check JUPYTERHUB_API_TOKEN with the hub at {API} (no answer")
    assert "checked again at every hub poll" in warnings[0]
