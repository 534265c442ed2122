package node

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The pods of a boot are bound to its node by nodeName, as a DaemonSet's
// would be: no scheduler runs. Both tolerate every taint.

// cniPod writes the node's CNI configuration (test/node/images/cni-installer).
func cniPod(b boot) *corev1.Pod {
	hostPath := corev1.HostPathDirectoryOrCreate
	p := basePod("cni-"+b.name, b.node, cniInstallerImage)
	p.Spec.HostNetwork = true
	c := &p.Spec.Containers[0]
	c.Env = []corev1.EnvVar{{Name: "POD_CIDRS", Value: b.podCIDRs}, {Name: "CNI_CONF_DIR", Value: "/host/etc/cni/net.d"}}
	c.VolumeMounts = []corev1.VolumeMount{{Name: "cni", MountPath: "/host/etc/cni/net.d"}}
	p.Spec.Volumes = []corev1.Volume{{Name: "cni", VolumeSource: corev1.VolumeSource{
		HostPath: &corev1.HostPathVolumeSource{Path: "/etc/cni/net.d", Type: &hostPath},
	}}}
	return p
}

// pausePod is the acceptance pod: the locally built pause image on the pod network.
func pausePod(b boot) *corev1.Pod {
	return basePod("pause-"+b.name, b.node, pauseImage)
}

func basePod(name, node, image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			AutomountServiceAccountToken:  ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers:                    []corev1.Container{{Name: "main", Image: image}},
		},
	}
}

func createPods(ctx context.Context, pods ...*corev1.Pod) error {
	for _, p := range pods {
		if _, err := env.kube.CoreV1().Pods(testNamespace).Create(ctx, p, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("pod %s: %w", p.Name, err)
		}
	}
	return nil
}

// podRunning says what keeps pod name from Running with its container ready
// and started at a time other than notStartedAt; it returns the pod.
func podRunning(ctx context.Context, name string, notStartedAt metav1.Time) (string, *corev1.Pod, error) {
	p, err := env.kube.CoreV1().Pods(testNamespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return "", nil, err
	}
	if p.Status.Phase != corev1.PodRunning {
		return fmt.Sprintf("pod %s %s%s", name, p.Status.Phase, containerWaiting(p)), p, nil
	}
	for _, c := range p.Status.ContainerStatuses {
		if !c.Ready || c.State.Running == nil {
			return fmt.Sprintf("pod %s: container %s not ready%s", name, c.Name, containerWaiting(p)), p, nil
		}
		if c.State.Running.StartedAt.Equal(&notStartedAt) {
			return fmt.Sprintf("pod %s: container %s not restarted yet", name, c.Name), p, nil
		}
	}
	return "", p, nil
}

func containerWaiting(p *corev1.Pod) string {
	var s []string
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			s = append(s, fmt.Sprintf("%s: %s %s", c.Name, w.Reason, w.Message))
		}
	}
	if len(s) == 0 {
		return ""
	}
	return " (" + strings.Join(s, "; ") + ")"
}

// families says which IP families the addresses are of: "IPv4", "IPv6" or "IPv4+IPv6".
func families(addrs []string) string {
	var v4, v6 bool
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err == nil {
			v4 = v4 || ip.Is4()
			v6 = v6 || ip.Is6()
		}
	}
	switch {
	case v4 && v6:
		return "IPv4+IPv6"
	case v6:
		return "IPv6"
	case v4:
		return "IPv4"
	}
	return "none"
}

// netcheckPort is where the peer pod answers.
const netcheckPort = "8080"

// checkPodToPod runs two more pods on b's node, on the pod network: a peer
// answering TCP connections with its name, and a client dialling each of
// the peer's pod IPs once, which writes the answers to its termination
// message (readable from the pod's status, without logs or exec, which only
// the serving-check boot has) and exits 0 only if every one answered. It
// returns the families that answered.
func checkPodToPod(ctx context.Context, b boot) (string, error) {
	peer := basePod("peer-"+b.name, b.node, netcheckImage)
	peer.Spec.Containers[0].Args = []string{"serve", netcheckPort}
	if err := createPods(ctx, peer); err != nil {
		return "", err
	}
	var p *corev1.Pod
	err := waitFor(ctx, "pod "+peer.Name+" Running", podTimeout, func() (pending string, err error) {
		pending, p, err = podRunning(ctx, peer.Name, metav1.Time{})
		return pending, err
	})
	if err != nil {
		return "", err
	}
	var addrs, ips []string
	for _, ip := range p.Status.PodIPs {
		ips = append(ips, ip.IP)
		addrs = append(addrs, net.JoinHostPort(ip.IP, netcheckPort))
	}
	if f := families(ips); f != b.ipFamily {
		return "", fmt.Errorf("pod %s has IPs %v (%s), want %s", peer.Name, ips, f, b.ipFamily)
	}
	client := basePod("dial-"+b.name, b.node, netcheckImage)
	client.Spec.RestartPolicy = corev1.RestartPolicyNever
	client.Spec.Containers[0].Args = append([]string{"dial"}, addrs...)
	if err := createPods(ctx, client); err != nil {
		return "", err
	}
	var c *corev1.Pod
	err = waitFor(ctx, "pod "+client.Name+" to finish", podTimeout, func() (string, error) {
		var err error
		if c, err = env.kube.CoreV1().Pods(testNamespace).Get(ctx, client.Name, metav1.GetOptions{}); err != nil {
			return err.Error(), nil
		}
		if c.Status.Phase == corev1.PodSucceeded || c.Status.Phase == corev1.PodFailed {
			return "", nil
		}
		return fmt.Sprintf("pod %s %s%s", client.Name, c.Status.Phase, containerWaiting(c)), nil
	})
	if err != nil {
		return "", err
	}
	var message string
	for _, s := range c.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil {
			message = t.Message
		}
	}
	if c.Spec.HostNetwork || p.Spec.HostNetwork || len(c.Status.PodIPs) == 0 {
		return "", fmt.Errorf("pods %s and %s are not both on the pod network", peer.Name, client.Name)
	}
	for _, a := range addrs {
		if !strings.Contains(message, a+" "+peer.Name+"\n") {
			return "", fmt.Errorf("pod %s (%s) did not reach %s of pod %s on node %s: %q", client.Name, c.Status.Phase, a, peer.Name, b.node, message)
		}
	}
	if c.Status.Phase != corev1.PodSucceeded {
		return "", fmt.Errorf("pod %s %s: %q", client.Name, c.Status.Phase, message)
	}
	progress("%s: pod %s %v reached pod %s %v", b.name, client.Name, c.Status.PodIPs, peer.Name, ips)
	return b.ipFamily, nil
}
