"""The node-bound rules' attack matrix, generated from what `nodehook rbac` prints (issue 42).

Its rows come from the rules and the roles, not from a hand-written list: for each resource a
node-bound policy matches (subresources included) and each write verb the agents' roles grant
on it, every form of that verb (create; update; merge, JSON and strategic merge patch; server-side
apply; delete), tried by node A's agent three ways: on its own node's object, on node B's, and with
a token that names no node. Each write is a server-side dry run, so rows do not disturb each other
(admission judges a dry run as a real write).

What is expected comes from the threat model (docs/security.md), not from the rules: a token without
a node, and any write in another node's name, is refused; in its own name a node may do only its
designed work (OWN_WORK below). No row's outcome may depend on a label the writer chose: the bodies
carry none.
"""

import copy
import json

from kube import ApiError

MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"

# Each verb the roles grant, as the forms a client sends it in.
FORMS = {"create": ["create"], "update": ["update"], "patch": ["merge", "json", "strategic", "apply"],
         "delete": ["delete"]}
# The designed work of a node in its own name (target, form): allowed; everything else refused.
UPDATES = {"update", "merge", "json", "strategic", "apply"}
OWN_WORK = {
    "finalizer": UPDATES,           # add its own finalizer
    "singleton": UPDATES,           # the leader marks singleton-handled
    "node labels": UPDATES,         # a label under the config's prefixes on its own Node
    "node condition": UPDATES,      # its condition on its own Node's status
    "event": {"create"},            # an Event in its own name
    "node Lease": {"create"} | UPDATES | {"delete"},  # its own node Lease (results, asks)
    "slot": UPDATES,                # renew the slot granted to it
    "singleton Lease": UPDATES,     # renew the singleton Lease it holds
}


def granted_verbs(role_docs, group, resource):
    """The write verbs the roles grant on group/resource."""
    verbs = set()
    for doc in role_docs:
        for rule in doc.get("rules", []):
            if group in rule.get("apiGroups", []) and resource in rule.get("resources", []):
                verbs |= set(rule.get("verbs", []))
    return sorted(verbs & set(FORMS))


def matched_resources(policies):
    """(group, resource) of every resource the policies match, subresources spelled out."""
    found = set()
    for p in policies:
        for rule in p["spec"]["matchConstraints"]["resourceRules"]:
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    found.add((group, resource))
    return found


class Target:
    """One kind of object the rules guard, with what a write on it sends in each form.
    `path(who)`: the object's path for "own" (node A's) or "other" (node B's); `change(who)` the
    designed change, as a merge patch; `full(who)` the whole object for create and apply."""

    def __init__(self, name, group, resource, path, change, actors, docs, full=None, crd=False, collection=None,
                 skip=()):
        self.name, self.group, self.resource = name, group, resource
        self.path, self.change, self.full, self.crd, self.collection = path, change, full, crd, collection
        self.actors = actors  # who -> Actor: the writer of each row
        self.docs = docs      # what `nodehook rbac` printed for that writer's config (roles and policies)
        self.skip = set(skip)  # forms that are no attack here, with the reason in the caller

    def request(self, form, who, admin):
        """(method, path, body, content type) of the write in `form`. A list the change adds to
        (finalizers, conditions) keeps what it holds, and a map (labels) what else it has: on a
        real node the kubelet's labels and conditions are there, and they are not the writer's."""
        path = self.path(who) if self.path else None
        if form == "create":
            return "POST", self.collection, self.full(who), "application/json"
        if form == "delete":
            return "DELETE", path, None, "application/json"
        if form == "apply":
            return "PATCH", path + "?fieldManager=attack-matrix&force=true", self.full(who), APPLY
        change = self.change(who)
        current = admin.request("GET", path)
        if form == "strategic":
            return "PATCH", path, change, STRATEGIC
        if form == "json":
            ops = []
            for top, fields in change.items():
                for key, value in fields.items():
                    have = current.get(top, {}).get(key)
                    where = f"/{top}/{key}"
                    if isinstance(value, dict) and isinstance(have, dict):
                        ops += [{"op": "add", "path": f"{where}/{k.replace('~', '~0').replace('/', '~1')}", "value": v}
                                for k, v in value.items()]
                    elif isinstance(value, list) and isinstance(have, list):
                        ops += [{"op": "add", "path": f"{where}/-", "value": v} for v in value]
                    else:
                        ops.append({"op": "add", "path": where, "value": value})
            return "PATCH", path, ops, JSON_PATCH
        merged = {top: {key: Added(current.get(top, {}).get(key), value) for key, value in fields.items()}
                  for top, fields in change.items()}
        if form == "merge":
            return "PATCH", path, merged, MERGE
        whole = copy.deepcopy(current)  # update: the object as it is, changed, written whole
        for top, fields in merged.items():
            whole.setdefault(top, {}).update(fields)
        return "PUT", path, whole, "application/json"


def Added(have, value):
    """`value` added to what a field holds: a list keeps its items (a condition of the same type
    replaced), a map merges in a merge patch by itself."""
    if isinstance(value, list) and isinstance(have, list):
        keys = {json.dumps(v.get("type") if isinstance(v, dict) else v) for v in value}
        return [h for h in have if json.dumps(h.get("type") if isinstance(h, dict) else h) not in keys] + value
    if isinstance(value, dict) and isinstance(have, dict):
        return dict(have, **value)
    return value


def outcome(actor, method, path, body, ctype):
    """"allowed", "refused" (by a node-bound rule) or "error: ..." (anything else)."""
    path += ("&" if "?" in path else "?") + "dryRun=All"
    try:
        actor.kube.request(method, path, body, ctype)
        return "allowed"
    except ApiError as e:
        text = e.body
        try:
            text = json.loads(e.body).get("message", e.body)
        except ValueError:
            pass
        if e.status == 403 and "ValidatingAdmissionPolicy" in text:
            return "refused"
        return f"error: HTTP {e.status}: {text[:200]}"


def rows(targets):
    """(target, form, who) for every form of every granted write verb on every matched resource."""
    out = []
    for t in targets:
        policies = [d for d in t.docs if d["kind"] == "ValidatingAdmissionPolicy"]
        roles = [d for d in t.docs if d["kind"] in ("ClusterRole", "Role")]
        matched = matched_resources(policies)
        if (t.group, t.resource) not in matched and (t.group, t.resource.split("/")[0] + "/*") not in matched:
            continue
        for verb in granted_verbs(roles, t.group, t.resource):
            for form in FORMS[verb]:
                if (form == "strategic" and t.crd) or form in t.skip:
                    continue  # the API server serves no strategic merge patch for custom resources
                for who in ("own", "other", "none"):
                    out.append((t, form, who))
    return out


def run(targets, admin):
    """Each row's (target name, resource, form, who, expected, outcome)."""
    table = []
    for t, form, who in rows(targets):
        method, path, body, ctype = t.request(form, "own" if who == "none" else who, admin)
        got = outcome(t.actors[who], method, path, body, ctype)
        if got.startswith("error: HTTP 409") and method == "POST":
            got = "allowed"  # past the rules; the name exists
        table.append((t.name, t.resource, form, who, expected(t, form, who), got))
    return table


def expected(target, form, who):
    return "allowed" if who == "own" and form in OWN_WORK[target.name] else "refused"
