"""End-to-end: hooks get the object exactly as the API server sent it (issue 8, item 2)."""

from conftest import RECORD_HOOK
from raw_json import member_bytes, raw_request, widget_bytes

STDIN_HOOK = RECORD_HOOK.parent / "stdin-hook"

# Number literals and escapes that a parse-and-rewrite round trip changes.
TRICKY_SPEC = (b'{"f17":123456789.12345679,"g":0.30000000000000004,"tiny":5e-324,"neg_zero":-0,'
               b'"neg_zero_f":-0.0,"i63":9223372036854775807,"u64":18446744073709551615,'
               b'"beyond":123456789012345678901234567890,"big_f":1.7976931348623157e308,'
               b'"s":"caf\\u00e9 \\ud83d\\ude00 nul\\u0000 tab\\t"}')


def test_hooks_get_numbers_and_escapes_exactly_as_the_api_server_sends_them(make_agent, widgets, tmp_path):
    stdin_dir = tmp_path / "stdin"
    stdin_dir.mkdir()
    agent = make_agent("node-a", reasons=("create", "resume"), hook=STDIN_HOOK,
                       env={"E2E_STDIN_DIR": str(stdin_dir)}).start()
    raw_request(widgets.kube, "POST", widgets.base, widget_bytes("exact", TRICKY_SPEC))
    served = raw_request(widgets.kube, "GET", f"{widgets.base}/exact")
    served_spec = member_bytes(served, "spec")
    # What the API server itself keeps of our literals (it re-encodes what it stores).
    assert b"123456789.12345679" in served_spec
    assert b"0.30000000000000004" in served_spec

    agent.wait_for("exact", "create")  # from the watch
    from_watch = (stdin_dir / "create-exact.json").read_bytes()
    assert member_bytes(from_watch, "spec") == served_spec

    assert agent.stop() == 0
    agent.start()
    agent.wait_for("exact", "resume")  # from the restart's list
    from_list = (stdin_dir / "resume-exact.json").read_bytes()
    assert member_bytes(from_list, "spec") == served_spec
    assert b'"kind":"Widget"' in from_list and b'"apiVersion":"example.com/v1"' in from_list
