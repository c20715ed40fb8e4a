"""README.md's install block, run as written (issue 25, item 6). First in the package: these
tests need a cluster without the CRD, and leave none of what they install behind (the namespaces,
the CRD and the widgets deleted, the nodes' host directories of the DaemonSet emptied)."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, _binary, parse_log_line, wait_until
from deploy_tools import kubectl, kubectl_binary
from kube import ApiError

from .cluster_tools import NAMESPACE, NEEDS_ROOT, NODES, hook_runs, namespace_story, pod_log, pods

pytestmark = NEEDS_ROOT


README = REPO / "README.md"
ROLLOUT_SECONDS = 180  # what `rollout status` gets before the case fails
LOGS_SECONDS = 60  # a user re-runs the `logs | grep` line until the hooks had their turn


def readme_steps(heading):
    """The commands of the first ```sh block under the README's `## heading`, in order, as
    (comment, command): the comment lines just above the command, joined, and the command with
    its continuation lines."""
    text = README.read_text()
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert section, f"README.md has no '## {heading}' section"
    block = re.search(r"^```sh\n(.*?)^```", section.group(1), re.M | re.S)
    assert block, f"README.md's '## {heading}' section has no ```sh block"
    steps, comment, command = [], [], None
    for line in block.group(1).splitlines():
        if command is not None:
            command += "\n" + line
        elif line.startswith("#"):
            comment.append(line.lstrip("#").strip())
        elif line.strip():
            command = line
        if command is not None and not command.endswith("\\"):
            steps.append((" ".join(comment), command))
            comment, command = [], None
    return steps


def manifest_kinds(path):
    return {d["kind"] for d in yaml.safe_load_all(path.read_text()) if d}


class ReadmeInstall:
    """The README's install block run as a user runs it on this cluster, in a checkout of their
    own: a copy of deploy/ and config/ (the kustomize path edits a kustomization there, never in
    the repository), with `kubectl`, `helm` and `kubectl-nodehook` on PATH being the test's
    binaries and KUBECONFIG the cluster's. The substitutions are the ones a user makes: the
    `docker build ... && docker push` line is not run, because the nodes already have the image
    built from the Dockerfile (test/image/build-image.sh, imported into every node's containerd);
    the README's image (registry.example.com/nodehook:0.1.0) becomes that image's name."""

    def __init__(self, real, tmp_path):
        self.real = real
        self.checkout = tmp_path / "checkout"
        for d in ("deploy", "config"):
            shutil.copytree(REPO / d, self.checkout / d)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "kubectl").symlink_to(kubectl_binary())
        (bin_dir / "kubectl-nodehook").symlink_to(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook"))
        helm_binary = Path(os.environ.get("NODEHOOK_HELM", REPO / "build" / "cache" / "helm"))
        if helm_binary.exists():
            (bin_dir / "helm").symlink_to(helm_binary)
        self.has_helm = helm_binary.exists()
        self.env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", KUBECONFIG=str(real.kubeconfig),
                        **{f"HELM_{k}_HOME": str(tmp_path / f"helm-{k.lower()}") for k in ("CACHE", "CONFIG", "DATA")})
        self.seconds = {}  # step -> seconds it took

        self.steps = []  # (kind, comment, command)
        for comment, command in readme_steps("Install on a cluster"):
            self.steps.append((self.kind(command), comment, command))
        kinds = [k for k, _, _ in self.steps]
        for kind in ("build", "crd", "helm", "kustomize", "rollout", "objects", "logs"):
            assert kinds.count(kind) == 1, f"README install block: expected one {kind} step, found {kinds}"
        build = next(c for k, _, c in self.steps if k == "build")
        self.readme_image = re.match(r"docker build -t (\S+) ", build).group(1)
        self.readme_repository, self.readme_tag = self.readme_image.rsplit(":", 1)
        self.repository, self.tag = real.image.rsplit(":", 1)
        self.objects = [f"{d['metadata']['namespace']}/{d['metadata']['name']}"
                        for d in yaml.safe_load_all(self.file_of("objects").read_text())
                        if d and d["kind"] == "Widget"]
        assert self.objects, "the README's objects step applies no Widget"

    def kind(self, command):
        """What a README step does, for the cases that reorder or skip some."""
        if command.startswith("docker "):
            return "build"
        if command.startswith("helm install"):
            return "helm"
        if re.match(r"kubectl apply -k ", command):
            return "kustomize"
        if " rollout status " in command:
            return "rollout"
        if " logs " in command and "hook succeeded" in command:
            return "logs"
        applied = re.match(r"kubectl apply -f (\S+)$", command.split("#")[0].strip())
        if applied:
            return "crd" if "CustomResourceDefinition" in manifest_kinds(self.checkout / applied.group(1)) else "objects"
        return "other"

    def command(self, kind):
        return next(c for k, _, c in self.steps if k == kind)

    def file_of(self, kind):
        return self.checkout / re.match(r"kubectl apply -f (\S+)", self.command(kind)).group(1)

    def substituted(self, command):
        """The command with the image the nodes have instead of the README's."""
        out = command.replace(self.readme_image, self.real.image) \
            .replace(f"image.tag={self.readme_tag}", f"image.tag={self.tag}") \
            .replace(self.readme_repository, self.repository)
        if command.startswith("helm install"):
            assert f"image.repository={self.repository}" in out and f"image.tag={self.tag}" in out, \
                f"the README's helm line no longer names the image as --set image.repository/tag: {command}"
        return out

    def start(self, command):
        return subprocess.Popen(["bash", "-o", "pipefail", "-c", self.substituted(command)], cwd=self.checkout,
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run(self, command, timeout=120, check=True):
        t0 = time.monotonic()
        try:
            out = subprocess.run(["bash", "-o", "pipefail", "-c", self.substituted(command)], cwd=self.checkout,
                                 env=self.env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`{command}` did not return within {timeout} s; {namespace_story(self.real, NAMESPACE)}")
        self.seconds[command.split("\n")[0][:60]] = round(time.monotonic() - t0, 1)
        if check:
            assert out.returncode == 0, f"`{command}` exited {out.returncode}: {out.stdout}{out.stderr}"
        return out

    def name_the_image_in_the_overlay(self, comment):
        """What the README's comment above `kubectl apply -k` says to do: its `images:` entry (with
        the image the nodes have) added to the kustomization.yaml it names, in the checkout."""
        entry = re.search(r"`(images: .*?)`", comment)
        target = re.search(r"(\S+/kustomization\.yaml)", comment)
        assert entry and target, f"the README's kustomize comment names no `images:` entry or file: {comment}"
        images = yaml.safe_load(entry.group(1))["images"]
        for image in images:
            assert (image["newName"], str(image["newTag"])) == (self.readme_repository, self.readme_tag), image
            image.update(newName=self.repository, newTag=self.tag)
        path = self.checkout / target.group(1)
        kustomization = yaml.safe_load(path.read_text())
        kustomization["images"] = kustomization.get("images", []) + images
        path.write_text(yaml.safe_dump(kustomization))

    def rollout_status(self, proc, t0):
        try:
            out, _ = proc.communicate(timeout=ROLLOUT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"`{self.command('rollout')}` did not return within {ROLLOUT_SECONDS} s; "
                        f"{namespace_story(self.real, NAMESPACE)}")
        assert proc.returncode == 0, f"`{self.command('rollout')}` exited {proc.returncode}: {out}"
        self.seconds[self.command("rollout")] = round(time.monotonic() - t0, 1)

    def logs_show_hook_succeeded(self):
        """The README's last line, run until it finds a line (the hooks run right after the
        objects are applied, a user may be quicker), then every node's agent log has the create
        hook of every object succeeded: the README's line reads one pod of the DaemonSet only."""
        command = self.command("logs")
        deadline = time.monotonic() + LOGS_SECONDS
        while (out := self.run(command, check=False)).returncode != 0:
            assert time.monotonic() < deadline, f"`{command}` found nothing in {LOGS_SECONDS} s: {out.stderr}"
            time.sleep(1)
        assert "hook succeeded" in out.stdout, out.stdout
        running = pods(self.real)
        assert sorted(p["spec"]["nodeName"] for p in running) == [f"node-{i}" for i in range(1, NODES + 1)], running
        for pod in running:
            name = pod["metadata"]["name"]
            wait_until(lambda: {("create", o) for o in self.objects} <= set(hook_runs(pod_log(self.real, name))),
                       f"{name} on {pod['spec']['nodeName']} to log 'hook succeeded' for {self.objects}")

    def host_directories(self):
        """The hostPath directories of the installed DaemonSet (none when it was never made)."""
        try:
            ds = self.real.kube.request("GET", f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets/nodehook")
        except ApiError as e:
            if e.status != 404:
                raise
            return []
        return [v["hostPath"]["path"] for v in ds["spec"]["template"]["spec"]["volumes"] if "hostPath" in v]

    def uninstall(self, path):
        """The README's Uninstall block for the kustomize path; for Helm `helm uninstall` (which the
        README says runs it as a pre-delete Job) and the namespace `--create-namespace` made. Then
        the objects and the CRD, and what the agents left on the nodes (state, hook files), so the
        cluster is as before the install."""
        directories = self.host_directories()
        if path == "helm":
            commands = ["helm uninstall nodehook -n nodehook", "kubectl delete namespace nodehook --ignore-not-found"]
        else:
            commands = [command for _, command in readme_steps("Uninstall")]
        commands += [f"kubectl delete --ignore-not-found -f {self.file_of(kind).relative_to(self.checkout)}"
                     for kind in ("objects", "crd")]
        # Every step, even after one failed, so that the next tests find the cluster clean.
        failed = []
        for command in commands:
            try:
                self.run(command)
            except (AssertionError, pytest.fail.Exception) as e:
                failed.append(str(e))
        if failed:  # then at least the namespace, and with it the agents
            kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", kubeconfig=self.real.kubeconfig)
        wait_until(lambda: not pods(self.real), "the agent pods to be gone")
        for i in range(1, NODES + 1):
            for d in directories:
                shutil.rmtree(self.real.host_path(f"node-{i}", d), ignore_errors=True)
        assert not failed, "\n".join(failed)


def agent_health(real, pod):
    """(GET /healthz status, GET /readyz status) of the pod's agent, asked from inside its node's
    network namespace (the pod address exists only there)."""
    port = next(p["containerPort"] for c in pod["spec"]["containers"] for p in c.get("ports", []) if p["name"] == "health")
    script = ("import sys, urllib.request, urllib.error\n"
              "for path in ('/healthz', '/readyz'):\n"
              "    try:\n"
              "        print(urllib.request.urlopen(sys.argv[1] + path, timeout=5).status)\n"
              "    except urllib.error.HTTPError as e:\n"
              "        print(e.code)\n")
    out = subprocess.run(["nsenter", f"--net=/proc/{real.node_pid(pod['spec']['nodeName'])}/ns/net", sys.executable,
                          "-c", script, f"http://{pod['status']['podIP']}:{port}"],
                         capture_output=True, text=True, timeout=30, check=True)
    return tuple(int(s) for s in out.stdout.split())


def logged(real, pod, event):
    out = kubectl("-n", NAMESPACE, "logs", pod["metadata"]["name"], "-c", "nodehook", kubeconfig=real.kubeconfig,
                  check=False)
    return out.returncode == 0 and any(parse_log_line(line).get("event") == event for line in out.stdout.splitlines())


@pytest.mark.parametrize("path", ["helm", "kustomize"])
def test_the_readmes_install_block_runs_as_written(real, tmp_path, path):
    """README.md's "Install on a cluster" block, each command in the order written: the Helm
    line or the kustomize one (the other is the alternative the README offers)."""
    readme = ReadmeInstall(real, tmp_path)
    if path == "helm" and not readme.has_helm:
        pytest.skip("helm not built (test/cluster/build.sh helm)")
    t0 = time.monotonic()
    try:
        for kind, comment, command in readme.steps:
            if kind == "build" or kind == ("kustomize" if path == "helm" else "helm"):
                continue
            if kind == "kustomize":
                readme.name_the_image_in_the_overlay(comment)
            if kind == "rollout":
                readme.rollout_status(readme.start(command), time.monotonic())
            elif kind == "logs":
                readme.logs_show_hook_succeeded()
            else:
                readme.run(command)
        installed = time.monotonic() - t0
    finally:
        t1 = time.monotonic()
        readme.uninstall(path)
    print(json.dumps({"readme_install": path, "case_seconds": round(time.monotonic() - t0, 1),
                      "install_seconds": round(installed, 1), "uninstall_seconds": round(time.monotonic() - t1, 1),
                      "steps": readme.seconds}))


def test_the_readmes_install_block_with_the_crd_after_the_daemonset(real, tmp_path):
    """The order a GitOps tool may choose: the DaemonSet (the kustomize line) first. Its agents
    wait for the CRD alive (/healthz 200, so the kubelet restarts nothing) and not ready (/readyz
    503), and the README's `rollout status`, started meanwhile, waits with them; once the CRD is
    applied it returns, and the objects' hooks run on both nodes. (Not ready is the point of the
    wait: a config whose resource is never served, a typo, stops a rollout. So a script that ran
    `rollout status` to its end before applying the CRD would wait for ever, as the README's CRD
    line says.)"""
    readme = ReadmeInstall(real, tmp_path)
    t0 = time.monotonic()
    try:
        steps = [s for s in readme.steps if s[0] not in ("build", "helm", "crd")]
        for kind, comment, command in steps:
            if kind == "kustomize":
                readme.name_the_image_in_the_overlay(comment)
                readme.run(command)
                waiting = wait_until(lambda: (p := pods(real)) and len(p) == NODES
                                     and all(logged(real, pod, "resource not served") for pod in p) and p,
                                     "each node's agent to say it waits for the CRD ('resource not served')", timeout=120)
                for pod in waiting:
                    assert agent_health(real, pod) == (200, 503), pod["metadata"]["name"]
            elif kind == "rollout":
                rollout_started = time.monotonic()
                rollout = readme.start(command)
                time.sleep(5)
                assert rollout.poll() is None, f"`{command}` returned without the CRD: {rollout.communicate()}"
                crd_applied = time.monotonic()
                readme.run(readme.command("crd"))
                readme.rollout_status(rollout, rollout_started)
                ready_after_crd = time.monotonic() - crd_applied
            elif kind == "logs":
                readme.logs_show_hook_succeeded()
            else:
                readme.run(command)
        installed = time.monotonic() - t0
        # Waiting cost no restart: the agents that waited are the ones that became ready.
        for pod in pods(real):
            assert pod["status"]["containerStatuses"][0]["restartCount"] == 0, namespace_story(real, NAMESPACE)
            assert pod["metadata"]["uid"] in {p["metadata"]["uid"] for p in waiting}
    finally:
        t1 = time.monotonic()
        readme.uninstall("kustomize")
    print(json.dumps({"readme_install": "crd after the daemonset", "case_seconds": round(time.monotonic() - t0, 1),
                      "install_seconds": round(installed, 1),
                      "rollout_status_after_crd_seconds": round(ready_after_crd, 1),
                      "uninstall_seconds": round(time.monotonic() - t1, 1), "steps": readme.seconds}))

