"""POST /v1/retry on its own admin listener, against the real API server: it makes a failed
handler run now, needs the bearer token when one is configured, and an admin address off
loopback without a token is refused before the agent starts."""

import subprocess
import urllib.error
import urllib.request

from conftest import REPO, _binary, wait_until

TOKEN = "e2e-admin-token-0123456789abcdef"


def admin_url(agent, target):
    listening = wait_until(lambda: agent.log_events("admin endpoint listening"),
                           f"admin endpoint of {agent.node} (log: {agent.log_path})")
    return f"http://127.0.0.1:{listening[0]['port']}{target}"


def post(url, token=None):
    request = urllib.request.Request(url, method="POST")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_a_retry_makes_a_failed_handler_run_now_instead_of_after_its_backoff(make_agent, widgets):
    # A failure waits an hour for its retry: only the callback can make it run again during the test.
    node = make_agent("node-a", retry_base_seconds=3600, retry_max_seconds=3600, retry_jitter_percent=0)
    node.fail_hook("slow-teardown", "create", 1)
    node.start()
    uid = widgets.create("slow-teardown", {"size": 1})["metadata"]["uid"]
    node.wait_for("slow-teardown", "create", result="failed")

    status, body = post(admin_url(node, f"/v1/retry?uid={uid}&handler=create"))
    assert status == 202, body
    node.wait_for("slow-teardown", "create", result="ok")
    assert [r["retry"] for r in node.records("slow-teardown", "create")] == [0, 1]


def test_with_a_token_file_the_admin_endpoint_answers_401_to_everyone_else(make_agent, widgets, tmp_path):
    token_file = tmp_path / "admin-token"
    token_file.write_text(TOKEN + "\n")
    node = make_agent("node-a", retry_base_seconds=3600, retry_max_seconds=3600, retry_jitter_percent=0,
                      admin_token_file=str(token_file))
    node.fail_hook("guarded", "create", 1)
    node.start()
    uid = widgets.create("guarded", {"size": 1})["metadata"]["uid"]
    node.wait_for("guarded", "create", result="failed")

    url = admin_url(node, f"/v1/retry?uid={uid}")
    unknown = admin_url(node, "/v1/retry?uid=00000000-0000-0000-0000-000000000000")
    assert post(url) == post(unknown) == post(url, "wrong-token-wrong-token")
    assert post(url)[0] == 401
    assert post(url, TOKEN)[0] == 202
    node.wait_for("guarded", "create", result="ok")


def test_an_admin_address_off_loopback_without_a_token_is_refused_with_the_reason(tmp_path, make_agent):
    node = make_agent("node-a", admin_address="0.0.0.0:8091")
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    result = subprocess.run([str(binary), "run", "--config", str(node.config_file)], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 2
    assert "tuning.admin_address" in result.stderr
    assert "set admin_token_file" in result.stderr
