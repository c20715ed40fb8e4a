"""One kopf "node" for test/bench/compare.py: kopf 1.45.2 set up the way per-node users run it.

Run as `kopf run --standalone --namespace NS kopf_node.py` with BENCH_NODE (this node's name) and
BENCH_HOOK (the hook program). Progress and the diffbase are annotations with a node-specific
prefix, `<node>.kopf.zalando.org`, so nodes never read each other's (kopf ignores annotations of
prefixes ending in `.kopf.zalando.org` when it computes an object's essence). Each handler runs
the hook as nodehook would: the object on stdin, the NODEHOOK_* variables set, exit 0 = done.
Events are posted only for warnings, as nodehook posts them only for failures."""

import json
import logging
import os
import subprocess

import kopf

NODE = os.environ["BENCH_NODE"]
HOOK = os.environ["BENCH_HOOK"]
PREFIX = f"{NODE}.kopf.zalando.org"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=PREFIX)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(
        prefix=PREFIX, key="last-handled-configuration")
    settings.persistence.finalizer = f"{PREFIX}/finalizer"
    settings.posting.level = logging.WARNING


def run_hook(reason, body, name, namespace, uid):
    env = dict(os.environ, NODEHOOK_REASON=reason, NODEHOOK_NODE=NODE, NODEHOOK_NAME=name,
               NODEHOOK_NAMESPACE=namespace or "", NODEHOOK_UID=uid)
    result = subprocess.run([HOOK], input=json.dumps(dict(body)).encode(), env=env, check=False)
    if result.returncode != 0:
        raise kopf.TemporaryError(f"hook exited {result.returncode}", delay=1)


@kopf.on.create("example.com", "v1", "widgets")
def on_create(body, name, namespace, uid, **_):
    run_hook("create", body, name, namespace, uid)


@kopf.on.update("example.com", "v1", "widgets")
def on_update(body, name, namespace, uid, **_):
    run_hook("update", body, name, namespace, uid)
