//go:build tools

// The kubelet the end-to-end run uses is built from this module
// (`go build k8s.io/kubernetes/cmd/kubelet`); this import keeps it, and the
// versions it was tested with, in go.mod and go.sum.
package e2e

import _ "k8s.io/kubernetes/cmd/kubelet"
