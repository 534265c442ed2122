package migrate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Action is what a Step does.
type Action string

// Actions, in the order a plan takes them.
const (
	// DeleteWebhookConfiguration comes first: once upstream's webhook server
	// is gone, its MachineDeployment webhook (failurePolicy Fail) would
	// refuse every change of an MD, the finalizer's removal included.
	DeleteWebhookConfiguration Action = "delete webhook configuration"
	// DeleteUpstreamPayloads deletes what upstream wrote for an MD being
	// deleted, which it would have deleted itself.
	DeleteUpstreamPayloads Action = "delete upstream's objects of a deleted MD"
	// RemoveFinalizer removes upstream's finalizer from an MD.
	RemoveFinalizer Action = "remove finalizer"
	// DeleteNodeCredentials deletes upstream's kubelet bootstrap kubeconfig
	// Secret and bootstrap tokens of an MD.
	DeleteNodeCredentials Action = "delete node credentials"
	// DeleteGetter deletes the getter token, its ServiceAccount and RBAC.
	DeleteGetter Action = "delete getter token"
	// DeleteOSCs deletes upstream's OperatingSystemConfig objects.
	DeleteOSCs Action = "delete operatingsystemconfigs"
	// DeleteOSCCRD deletes upstream's OperatingSystemConfig CRD.
	DeleteOSCCRD Action = "delete crd"
)

// Step is one thing to do.
type Step struct {
	Action Action
	// Text says what it does and why, for people.
	Text string
	// Objects are what it deletes; MD the MD whose finalizer it removes.
	Objects []Object
	MD      machinecontroller.Ref
	// Wait says why it cannot be done yet; empty when it can.
	Wait string
}

// Plan is what a migration does, in order, and what it leaves.
type Plan struct {
	// Found sums up what upstream left, one line per kind.
	Found []string
	// Blocked says why nothing may be applied now.
	Blocked []string
	Steps   []Step
	// Notes say what stays as it is, and why.
	Notes []string
	// Skipped are objects of upstream's names that are not upstream's:
	// left alone.
	Skipped []Skip
}

// NewPlan orders what to do about s.
func NewPlan(s *State) *Plan {
	p := &Plan{}
	p.sumUp(s)
	if len(s.Running) > 0 {
		p.Blocked = append(p.Blocked, fmt.Sprintf("upstream operating-system-manager's controller is running (%s): it would delete the Secrets "+
			"osm-apiserver takes over and write its own; scale its Deployment to 0 replicas first", strings.Join(s.Running, "; ")))
	}
	if !s.Serving && len(p.Found) > 0 {
		p.Blocked = append(p.Blocked, fmt.Sprintf("osm-apiserver does not answer through its APIService (%s): deploy it first, "+
			"its syncer takes the Secrets over", s.NotServing))
	}
	for _, w := range s.Webhooks {
		step := Step{Action: DeleteWebhookConfiguration, Text: "delete " + w.String() + ": osm-apiserver needs no webhook " +
			"(it defaults profiles when it renders; its CRD keeps profiles immutable)",
			Objects: []Object{{Kind: w.Kind, Name: w.Name, Management: !w.Worker}}}
		if len(w.Others) > 0 {
			step.Wait = fmt.Sprintf("it also holds webhooks that are not upstream's (%s): remove upstream's from it by hand", strings.Join(w.Others, ", "))
		}
		p.Steps = append(p.Steps, step)
	}
	p.Skipped = append(p.Skipped, s.Skipped...)
	for _, md := range s.MachineDeployments {
		p.machineDeployment(md)
		p.Skipped = append(p.Skipped, md.Skipped...)
	}
	credentials := credentialsWait(s)
	for _, md := range s.MachineDeployments {
		if len(md.Leftovers) > 0 && !md.Deleting {
			p.Steps = append(p.Steps, Step{Action: DeleteNodeCredentials, Objects: md.Leftovers, Wait: credentials,
				Text: "machinedeployment " + md.Ref.String() + ": delete upstream's node credentials: " + objectNames(md.Leftovers)})
		}
	}
	if len(s.Getter) > 0 {
		p.Steps = append(p.Steps, Step{Action: DeleteGetter, Objects: s.Getter, Wait: credentials,
			Text: "delete the getter token, which reads every Secret in cloud-init-settings, with its ServiceAccount and RBAC: " + objectNames(s.Getter)})
	}
	if len(s.OSCs) > 0 {
		var objects []Object
		for _, o := range s.OSCs {
			ns, name, _ := strings.Cut(o, "/")
			objects = append(objects, Object{Kind: "OperatingSystemConfig." + Group, Namespace: ns, Name: name, Management: true})
		}
		p.Steps = append(p.Steps, Step{Action: DeleteOSCs, Objects: objects,
			Text: fmt.Sprintf("delete upstream's %d OperatingSystemConfigs (%s): nothing reads them", len(objects), limit(s.OSCs, 5))})
	}
	if s.OSCCRD {
		p.Steps = append(p.Steps, Step{Action: DeleteOSCCRD, Objects: []Object{{Kind: "CustomResourceDefinition", Name: OSCCRD, Management: true}},
			Text: "delete CustomResourceDefinition " + OSCCRD + ": then `kubectl get osc` is osm-apiserver's"})
	}
	slices.SortFunc(p.Skipped, func(a, b Skip) int { return strings.Compare(a.Object.String(), b.Object.String()) })
	p.note(s)
	return p
}

// machineDeployment adds the steps that end upstream's hold on md: its
// finalizer, and for an MD being deleted what upstream would have deleted.
func (p *Plan) machineDeployment(md MachineDeployment) {
	ref := md.Ref.String()
	if md.Deleting {
		var objects []Object
		for _, s := range md.Secrets {
			if !s.Exists || s.Ours {
				continue
			}
			o := Object{Kind: "Secret", Namespace: machinecontroller.CloudInitSettingsNamespace, Name: s.Name, UID: s.UID}
			if s.NotUpstream != "" {
				p.Skipped = append(p.Skipped, Skip{Object: o, Reason: s.NotUpstream})
				continue
			}
			objects = append(objects, o)
		}
		objects = append(objects, md.Leftovers...)
		if len(objects) > 0 {
			p.Steps = append(p.Steps, Step{Action: DeleteUpstreamPayloads, Objects: objects,
				Text: "machinedeployment " + ref + " is being deleted: delete what upstream wrote for it: " + objectNames(objects)})
		}
		if md.Finalizer {
			p.Steps = append(p.Steps, Step{Action: RemoveFinalizer, MD: md.Ref,
				Text: "machinedeployment " + ref + " is being deleted: remove finalizer " + Finalizer + " (osm-apiserver cleans up by label)"})
		}
		return
	}
	if md.Finalizer {
		step := Step{Action: RemoveFinalizer, MD: md.Ref,
			Text: fmt.Sprintf("machinedeployment %s: its Secrets are osm-apiserver's, revision %s as the MD's: remove finalizer %s", ref, md.Revision, Finalizer)}
		if !md.current() {
			step.Text = "machinedeployment " + ref + ": remove finalizer " + Finalizer + " once its Secrets are osm-apiserver's"
			step.Wait = secretsWait(md)
		}
		p.Steps = append(p.Steps, step)
	}
}

// secretsWait says why md's Secrets are not osm-apiserver's yet.
func secretsWait(md MachineDeployment) string {
	var why []string
	for _, s := range md.Secrets {
		switch {
		case s.Unneeded:
		case !s.Exists:
			why = append(why, "Secret "+s.Name+" does not exist yet")
		case !s.Ours:
			why = append(why, "Secret "+s.Name+" is still upstream's")
		case s.Revision != md.Revision:
			why = append(why, fmt.Sprintf("Secret %s has revision %q, the MD %q", s.Name, s.Revision, md.Revision))
		}
	}
	if md.Output != "" {
		why = append(why, md.Output)
	}
	return strings.Join(why, "; ")
}

// credentialsWait says why upstream's node credentials are still needed:
// payloads that hand them to new VMs, or Machines that may be booting with them.
func credentialsWait(s *State) string {
	var upstream []string
	for _, md := range s.MachineDeployments {
		// An MD being deleted creates no VM.
		if md.upstreams() && !md.Deleting {
			upstream = append(upstream, md.Ref.String())
		}
	}
	var why []string
	if len(upstream) > 0 {
		why = append(why, "machinedeployments with upstream's payloads, which hand them to new VMs: "+limit(upstream, 5))
	}
	if len(s.Joining) > 0 {
		why = append(why, "Machines without a Node yet, which may be booting with them (they join, or delete them): "+limit(s.Joining, 5))
	}
	return strings.Join(why, "; ")
}

// Pending returns how many steps wait.
func (p *Plan) Pending() int {
	n := 0
	for _, s := range p.Steps {
		if s.Wait != "" {
			n++
		}
	}
	return n
}

func objectNames(objects []Object) string {
	names := make([]string, len(objects))
	for i, o := range objects {
		names[i] = o.String()
	}
	return limit(names, 5)
}

// limit joins up to n of items and says how many more there are.
func limit(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
