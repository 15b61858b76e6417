// Command cri is the smallest CRI client the end-to-end run needs (Debian has
// no crictl): it lists containers, and stops and removes every pod sandbox so
// that teardown leaves containerd with nothing running.
//
//	cri -endpoint unix:///path/containerd.sock ps
//	cri -endpoint unix:///path/containerd.sock rmp-all
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func main() {
	endpoint := flag.String("endpoint", "", "containerd's CRI socket, unix:///...")
	flag.Parse()
	if *endpoint == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: cri -endpoint unix:///path ps|rmp-all")
		os.Exit(2)
	}
	conn, err := grpc.NewClient(*endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fatal(err)
	}
	defer conn.Close()
	rt := runtimeapi.NewRuntimeServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	switch flag.Arg(0) {
	case "ps":
		err = ps(ctx, rt)
	case "rmp-all":
		err = removeAll(ctx, rt)
	default:
		err = fmt.Errorf("unknown command %q", flag.Arg(0))
	}
	if err != nil {
		fatal(err)
	}
}

// ps prints one line per container: pod, name, state, exit code, attempt.
func ps(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	list, err := rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
	if err != nil {
		return err
	}
	for _, c := range list.Containers {
		st, err := rt.ContainerStatus(ctx, &runtimeapi.ContainerStatusRequest{ContainerId: c.Id})
		if err != nil {
			return err
		}
		s := st.Status
		fmt.Printf("%s %s %s exit=%d attempt=%d\n", c.Labels["io.kubernetes.pod.name"],
			s.Metadata.Name, s.State, s.ExitCode, s.Metadata.Attempt)
	}
	return nil
}

// removeAll stops and removes every pod sandbox with its containers. A pod
// that cannot be removed yet (a container still starting, when the kubelet
// was stopped in the middle of starting it) is tried again, up to five
// times a second apart; the others are removed meanwhile.
func removeAll(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	var err error
	for range 5 {
		if err = removeEach(ctx, rt); err == nil {
			return nil
		}
		time.Sleep(time.Second)
	}
	return err
}

// removeEach tries to stop and remove each pod sandbox once, and returns
// the last error.
func removeEach(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	var last error
	for _, p := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			last = fmt.Errorf("stop pod %s: %w", p.Metadata.Name, err)
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			last = fmt.Errorf("remove pod %s: %w", p.Metadata.Name, err)
			continue
		}
		fmt.Println("removed pod", p.Metadata.Name)
	}
	return last
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "cri:", err)
	os.Exit(1)
}
