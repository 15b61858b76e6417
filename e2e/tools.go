//go:build tools

// The cluster the end-to-end run brings up is built from this module, in one
// `go build` of the packages below (k8s.io/kubernetes/cmd/...); these imports
// keep them, and the versions they were tested with, in go.mod and go.sum.
package e2e

import (
	_ "k8s.io/kubectl/pkg/cmd"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
