// kubectl for tests: the upstream command (with kustomize built in) from the
// published k8s.io/kubectl module, at the same release as the test API server.
// Tests use it to render the kustomize overlays, dry-run them against the API
// server and write kubeconfigs, exactly as a user would.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
