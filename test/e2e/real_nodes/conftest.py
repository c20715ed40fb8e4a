"""The one real-node cluster of a run: package-scoped, so every test file of this folder shares it,
and it stops (and is checked for leftovers) after the folder's last test."""

import subprocess
from pathlib import Path

import pytest

from .cluster_tools import RealCluster, agent_processes


@pytest.fixture(scope="package")
def real(tmp_path_factory):
    c = RealCluster(tmp_path_factory.mktemp("real-nodes"))
    yield c
    c.stop()
    assert c.proc.returncode == 0, f"real-node.sh exited {c.proc.returncode}; see {c.dir / 'real-node.log'}"
    # It leaves nothing behind: no agent of its nodes, namespace or cgroup. (Other tests' agents
    # may run on this machine meanwhile: only the ones seen in the nodes count.)
    assert not set(agent_processes()) & c.agents_seen, "agent processes outlived the cluster"
    leftovers = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{c.prefix}-n" not in leftovers, leftovers
    assert not Path(f"/sys/class/net/{c.prefix}").exists(), "bridge left behind"
    assert not list(Path("/sys/fs/cgroup").glob(f"*/{c.prefix}-node-*")), "cgroups left behind"


