package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// joinNode waits until the VM is a Ready node of the boot's MD running the
// pause pod, and returns how long that took from the VM's start.
// window is the result of checkJoinWindow, which holds the registration
// back until it is done.
func joinNode(ctx context.Context, vm *nodevm.VM, b boot, window <-chan error) (time.Duration, error) {
	if err := waitAgent(ctx, vm, b); err != nil {
		return 0, err
	}
	if b.edge {
		if err := runEdgeScript(ctx, vm, b, "the edge join script"); err != nil {
			return 0, err
		}
	}
	units := func() string { return guestUnits(ctx, vm) }
	select {
	case err := <-window:
		if err != nil {
			return 0, fmt.Errorf("while %s provisioned: %w", b.node, err)
		}
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	err := waitFor(ctx, "Node "+b.node+" to register", registerTimeout, func() (string, error) {
		if done, err := vm.Exited(); done {
			return "", err
		}
		_, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
		if err != nil {
			return "Node " + b.node + ": " + err.Error(), nil
		}
		return "", nil
	}, units)
	if err != nil {
		return 0, err
	}
	progress("%s: Node %s registered after %d s", b.name, b.node, int(time.Since(vm.Started).Seconds()))
	// The node's credentials come from its machine's join identity.
	if n, err := kubeletCSRs(ctx, b.node, b.node); err != nil || n == 0 {
		return 0, errors.Join(fmt.Errorf("node %s registered without an issued CSR from the join identity of its machine (%s)", b.node, joinUser(b.node)), err)
	}
	if err := createPods(ctx, cniPod(b), pausePod(b)); err != nil {
		return 0, err
	}
	err = waitFor(ctx, "Node "+b.node+" Ready", readyTimeout, func() (string, error) {
		pending, err := nodeState(ctx, b.node, "")
		if pending != "" {
			cni, _, _ := podRunning(ctx, "cni-"+b.name, metav1.Time{})
			pending = strings.TrimSuffix(pending+"; "+cni, "; ")
		}
		return pending, err
	}, units)
	if err != nil {
		return 0, err
	}
	readyAfter := time.Since(vm.Started)
	progress("%s: Node %s Ready after %d s", b.name, b.node, int(readyAfter.Seconds()))
	var pod *corev1.Pod
	err = waitFor(ctx, "pod pause-"+b.name+" Running", podTimeout, func() (pending string, err error) {
		pending, pod, err = podRunning(ctx, "pause-"+b.name, metav1.Time{})
		return pending, err
	})
	if err != nil {
		return 0, err
	}
	if err := checkFamilies(ctx, b, pod); err != nil {
		return 0, err
	}
	if b.edge {
		// The join script is safe to run twice.
		if err := runEdgeScript(ctx, vm, b, "the edge join script, again"); err != nil {
			return 0, err
		}
	}
	return readyAfter, nil
}

// nodeState says what keeps the node from Ready ("" when Ready). With
// oldBootID set, a node still reporting that boot is not Ready yet either.
func nodeState(ctx context.Context, name, oldBootID string) (string, error) {
	n, err := env.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "Node " + name + " not registered", nil
	}
	if err != nil {
		return err.Error(), nil // kube-apiserver is busy; ask again
	}
	if oldBootID != "" && n.Status.NodeInfo.BootID == oldBootID {
		return "Node " + name + " still reports the boot before", nil
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			if c.Status == corev1.ConditionTrue {
				return "", nil
			}
			return fmt.Sprintf("Node %s NotReady: %s", name, c.Message), nil
		}
	}
	return "Node " + name + " NotReady: no Ready condition yet", nil
}

// checkFamilies: the node's and the pod's addresses are of the MD's families.
func checkFamilies(ctx context.Context, b boot, pod *corev1.Pod) error {
	n, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	var nodeIPs, podIPs []string
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			nodeIPs = append(nodeIPs, a.Address)
		}
	}
	for _, ip := range pod.Status.PodIPs {
		podIPs = append(podIPs, ip.IP)
	}
	progress("%s: node addresses %v, pod addresses %v", b.name, nodeIPs, podIPs)
	if f := families(nodeIPs); f != b.ipFamily {
		return fmt.Errorf("node %s has InternalIPs %v (%s), want %s", b.node, nodeIPs, f, b.ipFamily)
	}
	if f := families(podIPs); f != b.ipFamily {
		return fmt.Errorf("pod %s has IPs %v (%s), want %s", pod.Name, podIPs, f, b.ipFamily)
	}
	return nil
}

func waitAgent(ctx context.Context, vm *nodevm.VM, b boot) error {
	err := waitFor(ctx, "the guest agent of "+b.node, agentTimeout, func() (string, error) {
		if done, err := vm.Exited(); done {
			return "", err
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := vm.Agent.Ping(pctx); err != nil {
			return "no answer (the VM boots)", nil
		}
		return "", nil
	})
	if err == nil {
		progress("%s: guest agent answers after %d s", b.name, int(time.Since(vm.Started).Seconds()))
	}
	return err
}

// runEdgeScript runs the MD's join script from its Secret in the VM as an
// operator would: `OSM_MACHINE_NAME=<machine> bash` with the script on stdin.
func runEdgeScript(ctx context.Context, vm *nodevm.VM, b boot, what string) error {
	script, err := secretData(ctx, machinecontroller.EdgeScriptSecretName(b.md, testNamespace), machinecontroller.EdgeScriptDataKey)
	if err != nil {
		return err
	}
	start := time.Now()
	type result struct {
		r   nodevm.ExecResult
		err error
	}
	done := make(chan result, 1)
	sctx, cancel := context.WithTimeout(ctx, edgeScriptTimeout)
	defer cancel()
	go func() {
		r, err := vm.Agent.Exec(sctx, "OSM_MACHINE_NAME="+b.node+" bash", script)
		done <- result{r, err}
	}()
	var res result
	err = waitFor(sctx, what+" in "+b.node, edgeScriptTimeout, func() (string, error) {
		select {
		case res = <-done:
			return "", res.err
		default:
			return "running", nil
		}
	}, func() string { return guestUnits(ctx, vm) })
	if err != nil {
		return err
	}
	if res.r.ExitCode != 0 {
		return fmt.Errorf("%s exited %d:\n%s", what, res.r.ExitCode, testenv.TailLines(res.r.Stderr, 30))
	}
	progress("%s: %s done in %d s: %s", b.name, what, int(time.Since(start).Seconds()), lastLine(res.r.Stderr))
	return nil
}

// guestUnits is the state of the node's units, for progress lines.
func guestUnits(ctx context.Context, vm *nodevm.VM) string {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	units := []string{"osm-bootstrap", "osm-setup", "containerd", "kubelet"}
	r, err := vm.Agent.Exec(ctx, "systemctl is-active "+strings.Join(units, " "), nil)
	if err != nil {
		return "guest: no answer"
	}
	states := strings.Fields(r.Stdout)
	var s []string
	for i, u := range units {
		if i < len(states) {
			s = append(s, u+"="+states[i])
		}
	}
	return "guest: " + strings.Join(s, " ")
}

func lastLine(s string) string {
	return testenv.TailLines(s, 1)
}
