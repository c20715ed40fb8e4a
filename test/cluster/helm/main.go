// helm for tests: the upstream command from the published helm.sh/helm/v4 module, built the
// same way as kubectl (test/cluster/build.sh helm). Tests lint and render deploy/helm/nodehook
// with it, exactly as a user would. go.mod pins the k8s.io modules to the release kubectl and
// the test API server use (v0.36.3): helm 4.2 is the last line built on 1.36, and the shared
// versions let the Go build cache reuse most of the ~1000 packages those builds compiled.
package main

import (
	"errors"
	"log/slog"
	"os"

	helmcmd "helm.sh/helm/v4/pkg/cmd"
	"helm.sh/helm/v4/pkg/kube"
)

func main() {
	kube.ManagedFieldsManager = "helm"
	cmd, err := helmcmd.NewRootCmd(os.Stdout, os.Args[1:], helmcmd.SetupLogging)
	if err != nil {
		slog.Warn("command failed", slog.Any("error", err))
		os.Exit(1)
	}
	if err := cmd.Execute(); err != nil {
		var cerr helmcmd.CommandError
		if errors.As(err, &cerr) {
			os.Exit(cerr.ExitCode)
		}
		os.Exit(1)
	}
}
