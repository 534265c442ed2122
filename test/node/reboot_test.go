package node

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// rebootNode reboots the VM through the guest agent and waits until the node
// reports the new boot and is Ready again, with the pause pod running again.
// Bootstrap and setup must not run again, and the kubelet keeps its
// credentials (no new CSR). It returns the time from reboot to Ready.
func rebootNode(ctx context.Context, vm *nodevm.VM, b boot) (time.Duration, error) {
	n, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	bootID := n.Status.NodeInfo.BootID
	pod, err := env.kube.CoreV1().Pods(testNamespace).Get(ctx, "pause-"+b.name, metav1.GetOptions{})
	if err != nil {
		return 0, err
	}
	started := startedAt(pod)
	csrs, err := kubeletCSRs(ctx, b.node, b.node)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := vm.Agent.Reboot(ctx); err != nil {
		return 0, fmt.Errorf("reboot: %w", err)
	}
	progress("%s: rebooting %s (boot %s)", b.name, b.node, bootID)
	err = waitFor(ctx, "Node "+b.node+" Ready after the reboot", rebootTimeout, func() (string, error) {
		if done, err := vm.Exited(); done {
			return "", err
		}
		return nodeState(ctx, b.node, bootID)
	})
	if err != nil {
		return 0, err
	}
	readyAfter := time.Since(start)
	progress("%s: Node %s Ready after the reboot in %d s", b.name, b.node, int(readyAfter.Seconds()))
	err = waitFor(ctx, "pod pause-"+b.name+" Running after the reboot", podTimeout, func() (pending string, err error) {
		pending, pod, err = podRunning(ctx, "pause-"+b.name, started)
		return pending, err
	})
	if err != nil {
		return 0, err
	}
	if err := checkFamilies(ctx, b, pod); err != nil {
		return 0, err
	}
	if err := checkNotRerun(ctx, vm); err != nil {
		return 0, err
	}
	if err := checkFlushedAtBoot(ctx, vm); err != nil {
		return 0, err
	}
	after, err := kubeletCSRs(ctx, b.node, b.node)
	if err != nil {
		return 0, err
	}
	if after != csrs {
		return 0, fmt.Errorf("the kubelet bootstrapped again: %d issued CSRs from the machine's join identity, %d before the reboot", after, csrs)
	}
	return readyAfter, nil
}

func startedAt(p *corev1.Pod) metav1.Time {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Running != nil {
			return c.State.Running.StartedAt
		}
	}
	return metav1.Time{}
}

// checkNotRerun: in this boot neither osm-bootstrap nor osm-setup started
// (their markers hold them back), and cloud-init is disabled for good.
func checkNotRerun(ctx context.Context, vm *nodevm.VM) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := vm.Agent.Run(ctx, `for u in osm-bootstrap osm-setup; do
  echo "$u $(systemctl show -p ExecMainStartTimestampMonotonic --value "$u.service")"
done
test -e /etc/cloud/cloud-init.disabled && echo cloud-init-disabled
test -e /var/lib/osm/bootstrap.done && test -e /var/lib/osm/setup.done && echo markers`)
	if err != nil {
		return err
	}
	for _, want := range []string{"osm-bootstrap 0\n", "osm-setup 0\n", "cloud-init-disabled\n", "markers\n"} {
		if !strings.Contains(out, want) {
			return fmt.Errorf("bootstrap ran again or left no marker: want %q in:\n%s", strings.TrimSpace(want), out)
		}
	}
	return nil
}

// checkFlushedAtBoot: osm-setup enabled osm-report-flush.service, which sends
// what the spool kept across a reboot once provisioning is done (nothing
// else on the node reports then); in this boot it ran, exited 0 and left the
// spool empty.
func checkFlushedAtBoot(ctx context.Context, vm *nodevm.VM) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := vm.Agent.Run(ctx, `u=osm-report-flush.service
for p in LoadState UnitFileState ExecMainStartTimestampMonotonic ExecMainCode ExecMainStatus; do
  echo "$p=$(systemctl show -p "$p" --value "$u")"
done
echo "spooled=$(find /var/lib/osm-report/spool -name '*.rec' 2>/dev/null | wc -l)"`)
	if err != nil {
		return err
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = strings.TrimSpace(v)
		}
	}
	// ExecMainCode 1 is CLD_EXITED: the process exited, with ExecMainStatus.
	want := map[string]string{"LoadState": "loaded", "UnitFileState": "enabled", "ExecMainCode": "1", "ExecMainStatus": "0", "spooled": "0"}
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("osm-report-flush.service at boot: %s is %q, want %q:\n%s", k, got[k], v, out)
		}
	}
	if got["ExecMainStartTimestampMonotonic"] == "" || got["ExecMainStartTimestampMonotonic"] == "0" {
		return fmt.Errorf("osm-report-flush.service did not start in this boot:\n%s", out)
	}
	return nil
}
