package node

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/osm-apiserver/osm-apiserver/test/internal/testenv"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// diagnose prints what explains a failed boot: the serial console's end, the
// node's units' journal and cloud-init's state (through the guest agent), the
// node's conditions, the pods' states and events, and the servers' last requests.
func diagnose(vm *nodevm.VM, b boot) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	section := func(title, body string) {
		fmt.Fprintf(os.Stderr, "----- %s: %s -----\n%s\n", b.name, title, strings.TrimRight(body, "\n"))
	}
	section("serial console, last 60 lines ("+vm.SerialLog+")", vm.SerialTail(60))
	guest := func(title, script string) {
		gctx, gcancel := context.WithTimeout(ctx, time.Minute)
		defer gcancel()
		r, err := vm.Agent.Exec(gctx, script, nil)
		if err != nil {
			section(title, "guest agent: "+err.Error())
			return
		}
		section(title, r.Stdout+r.Stderr)
	}
	guest("journalctl -u osm-bootstrap -u osm-setup -u kubelet -u containerd (last 150 lines)",
		"journalctl --no-pager -o short-monotonic -u osm-bootstrap -u osm-setup -u kubelet -u containerd | tail -n 150")
	guest("cloud-init", "cloud-init status --long; tail -n 40 /var/log/cloud-init-output.log; ls -l /var/lib/osm /etc/cni/net.d")
	if n, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{}); err == nil {
		var s []string
		for _, c := range n.Status.Conditions {
			s = append(s, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
		}
		section("Node "+b.node, strings.Join(s, "\n"))
	}
	for _, pod := range []string{"cni-" + b.name, "pause-" + b.name} {
		pending, _, err := podRunning(ctx, pod, metav1.Time{})
		if err != nil {
			pending = err.Error()
		}
		events, err := env.kube.CoreV1().Events(testNamespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod).String(),
		})
		var s []string
		if err == nil {
			for _, e := range events.Items {
				s = append(s, fmt.Sprintf("%s %s: %s", e.Type, e.Reason, e.Message))
			}
		}
		section("pod "+pod, strings.TrimSpace(pending+"\n"+strings.Join(s, "\n")))
	}
	section("mirror requests, last 15", testenv.TailFile(env.servers.mirrorLog(b.name), 15))
	section("registry requests, last 15", testenv.TailFile(env.servers.registryLog, 15))
}
