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

// removeAll stops and removes every pod sandbox with its containers.
func removeAll(ctx context.Context, rt runtimeapi.RuntimeServiceClient) error {
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return err
	}
	for _, p := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			return fmt.Errorf("stop pod %s: %w", p.Metadata.Name, err)
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: p.Id}); err != nil {
			return fmt.Errorf("remove pod %s: %w", p.Metadata.Name, err)
		}
		fmt.Println("removed pod", p.Metadata.Name)
	}
	return nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "cri:", err)
	os.Exit(1)
}
