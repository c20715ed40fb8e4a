"""The DaemonSet on real kubelets: the image built from the Dockerfile (test/image/build-image.sh),
a cluster of two real nodes (test/cluster/real-node.sh: kubelet + containerd + runc each, in
namespaces of their own), and the shipped overlays plus test/cluster/real-node-component applied
with `kubectl apply -k`, as users install. One cluster for the whole package (the `real` fixture
of conftest.py); the files run in the order of their numbers, the tests of each in file order,
and each test leaves the cluster as the next one expects (the install stays):

1. test_1_readme_install.py: the README's install block and its Uninstall block as written (no
   component: the pods on the pod network), which leave nothing behind;
2. test_2_restricted_install.py: the restricted overlay installed (it stays, with the widget w1
   that later tests count on), its pods as the securityContext says, and a hostile pod with the
   agents' token;
3. test_3_restarts_and_rollouts.py: the kubelet restarting a killed agent, Pod Security refusing
   the pod, the host overlay and config changes rolling out, a hook's taint;
4. test_4_node_steps.py: a rollout's drains and reboots (issue 28);
5. test_5_helm_chart.py: the Helm chart beside the kustomize install, and its uninstall;
6. test_6_lost_nodes.py: a token rotated, a node cut off, and last a node lost for good.

What the kubelet does here is real: runc enforces the securityContext, the kubelet projects the
ConfigMaps, the service account token and the emptyDirs, runs the probes and restarts crashed
containers, the DaemonSet controller rolls out and Pod Security admission judges the pods.

cluster_tools.py and node_step_tools.py hold what more than one file uses."""
