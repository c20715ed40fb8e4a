// nodehook-k8s-node is kube-controller-manager, kube-scheduler and kubelet from
// k8s.io/kubernetes (the release the test API server is built from) in one
// binary, chosen by the first argument, so the three share one build and one
// link. test/cluster/real-node.sh runs it; see ../README.md.
//
//	nodehook-k8s-node kubelet|controller-manager|scheduler [FLAGS]...
package main

import (
	"context"
	"fmt"
	"os"
	_ "time/tzdata" // CronJob time zones, as the upstream controller-manager main has

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream mains
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client metrics, as upstream mains
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream mains
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	commands := map[string]func() *cobra.Command{
		"kubelet":            func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
		"controller-manager": func() *cobra.Command { return controllermanager.NewControllerManagerCommand() },
		"scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	}
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: nodehook-k8s-node kubelet|controller-manager|scheduler [FLAGS]...")
		os.Exit(2)
	}
	command := commands[os.Args[1]]()
	// cobra reads os.Args[1:] unless told otherwise: hand it the flags only.
	command.SetArgs(os.Args[2:])
	os.Exit(cli.Run(command))
}
