package main

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	_ "go.etcd.io/etcd/server/v3/embed"
)

func main() {}
