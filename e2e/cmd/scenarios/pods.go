package main

import (
	"cmp"
	"encoding/json"
	"path/filepath"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// pod is a pod as the scenarios need it: the busybox image, $RUN/bin at
// /opt/e2e, and $RUN/out/NAMESPACE/POD at /out (a hostPath with the pod's
// name as its subPathExpr, so that every pod of a Job or a Deployment has
// its own).
type pod struct {
	Grace         int64                // terminationGracePeriodSeconds; 0: 30
	RestartPolicy corev1.RestartPolicy // "": Never
	Labels        map[string]string
	// Spread: the pods that Labels select, each revision of a Deployment
	// apart, are spread over the nodes, one more on one node at most.
	Spread     bool
	Inits      []ctr // init containers that run to completion, first
	Sidecars   []ctr // init containers with restartPolicy Always
	Containers []ctr
	EmptyDirs  []string // emptyDir volumes, by name
}

type ctr struct {
	Name      string
	Image     string            // "" for busybox
	Pull      corev1.PullPolicy // "" for Never: the image is in the node's containerd
	Command   []string
	Args      []string
	PreStop   []string // an exec preStop hook
	User      int64    // runAsUser, when not 0 (root)
	Mounts    []mount  // besides /opt/e2e and /out
	Port      int      // a TCP containerPort it declares, when not 0
	ReadyPort int      // an HTTP GET readiness probe on this port, every second
	ReadyPath string   // the probe's path; "" for /
}

// mount is a volume of the pod's at a path of the container.
type mount struct {
	Volume, Path string
	ReadOnly     bool
}

const busybox = "k8s.local/busybox:e2e"

func (p pod) spec(k *kube, ns string) corev1.PodSpec {
	grace := p.Grace
	if grace == 0 {
		grace = 30
	}
	restart := p.RestartPolicy
	if restart == "" {
		restart = corev1.RestartPolicyNever
	}
	dir := corev1.HostPathDirectory
	spec := corev1.PodSpec{
		RestartPolicy:                 restart,
		TerminationGracePeriodSeconds: &grace,
		Containers:                    containers(p.Containers, false),
		InitContainers:                append(containers(p.Inits, false), containers(p.Sidecars, true)...),
		Volumes: []corev1.Volume{
			{Name: "bin", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: filepath.Join(k.run, "bin"), Type: &dir}}},
			{Name: "out", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: filepath.Join(k.run, "out", ns), Type: &dir}}},
		},
	}
	if p.Spread {
		spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
			MaxSkew:           1,
			TopologyKey:       corev1.LabelHostname,
			WhenUnsatisfiable: corev1.DoNotSchedule,
			LabelSelector:     &metav1.LabelSelector{MatchLabels: p.Labels},
			MatchLabelKeys:    []string{appsv1.DefaultDeploymentUniqueLabelKey},
		}}
	}
	for _, name := range p.EmptyDirs {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: name,
			VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
	}
	return spec
}

// template is the pod as a controller's template.
func (p pod) template(k *kube, ns string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: p.Labels},
		Spec:       p.spec(k, ns),
	}
}

func containers(cs []ctr, restartAlways bool) []corev1.Container {
	var out []corev1.Container
	for _, c := range cs {
		image := c.Image
		if image == "" {
			image = busybox
		}
		m := corev1.Container{
			Name:            c.Name,
			Image:           image,
			ImagePullPolicy: cmp.Or(c.Pull, corev1.PullNever),
			Command:         c.Command,
			Args:            c.Args,
			Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
				FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}}},
			VolumeMounts: []corev1.VolumeMount{
				{Name: "bin", MountPath: "/opt/e2e", ReadOnly: true},
				{Name: "out", MountPath: "/out", SubPathExpr: "$(POD_NAME)"},
			},
		}
		for _, v := range c.Mounts {
			m.VolumeMounts = append(m.VolumeMounts, corev1.VolumeMount{Name: v.Volume, MountPath: v.Path, ReadOnly: v.ReadOnly})
		}
		if c.Port != 0 {
			m.Ports = []corev1.ContainerPort{{ContainerPort: int32(c.Port), Protocol: corev1.ProtocolTCP}}
		}
		if c.User != 0 {
			user := c.User
			m.SecurityContext = &corev1.SecurityContext{RunAsUser: &user, RunAsGroup: &user}
		}
		if restartAlways {
			always := corev1.ContainerRestartPolicyAlways
			m.RestartPolicy = &always
		}
		if c.PreStop != nil {
			m.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: c.PreStop}}}
		}
		if c.ReadyPort != 0 {
			path := c.ReadyPath
			if path == "" {
				path = "/"
			}
			m.ReadinessProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt(c.ReadyPort)}},
				PeriodSeconds: 1,
			}
		}
		out = append(out, m)
	}
	return out
}

// sh runs script under busybox sh, with up() printing the shared clock.
func sh(script string) []string {
	return []string{"sh", "-c", `up() { read -r u _ </proc/uptime; echo "$u"; }; ` + script}
}

// proxyAwait runs proxy-await, mounted from the host, with args.
func proxyAwait(args ...string) []string {
	return append([]string{"/opt/e2e/proxy-await"}, args...)
}

// fakeproxy runs the stand-in proxy logging every request to /out/proxy.log.
func fakeproxy(args ...string) []string {
	return append([]string{"/opt/e2e/fakeproxy", "-log", "/out/proxy.log"}, args...)
}

// linkerdProxy and istioProxy are the stand-in proxy on the ports the real
// ones use (Linkerd's admin port 4191; Istio's 15021 for readiness and
// 15020 for /quitquitquit), where proxy-await's presets look.
func linkerdProxy(args ...string) ctr {
	return ctr{Name: "proxy", Command: fakeproxy(append([]string{"-flavor", "linkerd", "-addr", "127.0.0.1:4191"}, args...)...)}
}

func istioProxy(args ...string) ctr {
	return ctr{Name: "proxy", Command: fakeproxy(append([]string{"-flavor", "istio",
		"-addr", "127.0.0.1:15020", "-ready-addr", "127.0.0.1:15021"}, args...)...)}
}

// witness is a second container that records when the kubelet's SIGTERM
// reaches it (as PID 1 of its container, sh acts on a trapped TERM), so a
// scenario can tell the kubelet's TERM from the one proxy-await delivers.
var witness = ctr{Name: "witness", Command: sh(`trap 'echo TERM $(up) >>/out/witness; exit 0' TERM
echo started >>/out/witness
while :; do sleep 1 & wait $!; done`)}

// proxyLog is the stand-in proxy's request log, one entry a line.
type proxyEntry struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	Note   string `json:"note"`
}

func proxyLog(text string) []proxyEntry {
	var entries []proxyEntry
	dec := json.NewDecoder(strings.NewReader(text))
	for {
		var e proxyEntry
		if dec.Decode(&e) != nil {
			return entries
		}
		entries = append(entries, e)
	}
}

// count counts the entries for method and path, with status (0: any).
func count(entries []proxyEntry, method, path string, status int) int {
	n := 0
	for _, e := range entries {
		if e.Method == method && e.Path == path && (status == 0 || e.Status == status) {
			n++
		}
	}
	return n
}
