"""Raw JSON bytes to and from the API server, for tests that care about every byte (number
literals, escapes, nesting deeper than Python's json module will write)."""

import urllib.error
import urllib.request

from kube import ApiError


def raw_request(kube, method, path, body=b"", content_type="application/json"):
    """Sends `body` (bytes) as it is and returns the response body as bytes."""
    req = urllib.request.Request(kube.server + path, data=body or None, method=method)
    req.add_header("Authorization", f"Bearer {kube.token}")
    req.add_header("Accept", "application/json")
    if body:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, context=kube.ssl, timeout=60) as resp:
            return resp.read()
    except urllib.error.HTTPError as e:
        raise ApiError(e.code, e.read().decode(errors="replace")) from None


def _brackets(text, start=0):
    """Yields (index, depth after the byte) for each bracket of `text` outside strings."""
    depth, in_string, escaped = 0, False, False
    for i in range(start, len(text)):
        c = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif c == 0x5C:  # backslash
                escaped = True
            elif c == 0x22:  # quote
                in_string = False
        elif c == 0x22:
            in_string = True
        elif c in b"{[":
            depth += 1
            yield i, depth
        elif c in b"}]":
            depth -= 1
            yield i, depth


def member_bytes(text, key):
    """The exact bytes of the first member `key` of a JSON object text (an object value),
    found by bracket counting outside strings: b'"spec":{...}' -> b'{...}'."""
    start = text.index(b'"' + key.encode() + b'":') + len(key) + 3
    for i, depth in _brackets(text, start):
        if depth == 0:
            return text[start:i + 1]
    raise ValueError(f"no complete member {key}")


def json_depth(text):
    """Nesting depth counted from the text's own top-level bracket, as the API server counts."""
    return max(depth for _, depth in _brackets(text))


def nested_spec(depth):
    """A spec whose widget is nested `depth` levels from its own top-level brace:
    {"metadata":..,"spec":{"x":{"x":...{}}}} with depth brackets counted from the first "{"."""
    return b'{"x":' * (depth - 2) + b"{}" + b"}" * (depth - 2)


def widget_bytes(name, spec_bytes):
    return (b'{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"' + name.encode() +
            b'"},"spec":' + spec_bytes + b"}")
