package app

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	embedded "github.com/osm-apiserver/osm-apiserver/artifacts/default-osps"
	"github.com/osm-apiserver/osm-apiserver/cmd/osm-apiserver/app/options"
	"github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/migrate"
)

// migrateOptions are the flags of `osm-apiserver migrate`.
type migrateOptions struct {
	kubeconfig, workerKubeconfig string
	namespace, upstreamNamespace string
	apply                        bool
}

func newMigrateCommand() *cobra.Command {
	o := &migrateOptions{namespace: "kube-system", upstreamNamespace: "kube-system"}
	cmd := &cobra.Command{
		Use:   "migrate [--apply]",
		Short: "Take a cluster over from upstream operating-system-manager, without touching a node (a dry run unless --apply)",
		Long: `Find what upstream operating-system-manager left in the cluster, print what to do
about it in order, and with --apply do it. Run it after deploying osm-apiserver and
scaling upstream's controller to 0 replicas (docs/migrating.md).

In order: delete upstream's webhook configurations; remove upstream's finalizer
` + migrate.Finalizer + ` from every MachineDeployment whose
Secrets osm-apiserver's syncer has taken over (same revision annotation: no Machine is
recreated); delete upstream's node credentials (kubelet bootstrap kubeconfigs, bootstrap
tokens, the getter token ` + migrate.GetterTokenSecret + ` with its ServiceAccount and RBAC)
once no MachineDeployment hands them out and no Machine may be joining with them; delete
upstream's OperatingSystemConfigs and their CRD, so that ` + "`kubectl get osc`" + ` is
osm-apiserver's. OperatingSystemProfiles stay as they are, upstream's defaults included;
the output says which MachineDeployments use them.

A step that cannot be done yet says why and is left for the next run; running it again
does what has become possible and nothing twice. It exits non-zero while steps wait.`,
		Args:              cobra.NoArgs,
		PersistentPreRunE: func(*cobra.Command, []string) error { return nil },
		RunE: func(cmd *cobra.Command, _ []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.apply, "apply", o.apply, "Do what the plan says; without it nothing is changed.")
	fs.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "Kubeconfig of the management cluster (as osm-apiserver's); default: in-cluster config.")
	fs.StringVar(&o.workerKubeconfig, "worker-cluster-kubeconfig", o.workerKubeconfig, "Kubeconfig of the worker cluster, if osm-apiserver runs with one.")
	fs.StringVar(&o.namespace, "namespace", o.namespace, "osm-apiserver's --namespace: its default OperatingSystemProfiles.")
	fs.StringVar(&o.upstreamNamespace, "upstream-namespace", o.upstreamNamespace, "upstream operating-system-manager's -namespace: its OperatingSystemConfigs and its controller's Lease.")
	return cmd
}

func (o *migrateOptions) run(ctx context.Context, out io.Writer) error {
	clients, err := o.clients()
	if err != nil {
		return err
	}
	defaults, err := embedded.Load()
	if err != nil {
		return err
	}
	opts := migrate.Options{ProfileNamespace: o.namespace, UpstreamNamespace: o.upstreamNamespace}
	for _, p := range defaults {
		opts.DefaultProfiles = append(opts.DefaultProfiles, p.Name)
	}
	state, err := migrate.Find(ctx, clients, opts)
	if err != nil {
		return err
	}
	plan := migrate.NewPlan(state)
	if !o.apply {
		fmt.Fprintf(out, "osm-apiserver migrate: a dry run, nothing is changed (--apply does the plan)\n\n")
		return plan.Write(out)
	}
	fmt.Fprintf(out, "osm-apiserver migrate --apply\n\n")
	if err := plan.WriteApplying(out); err != nil {
		return err
	}
	if len(plan.Blocked) > 0 {
		return errors.New("blocked: nothing was changed (see above)")
	}
	err = migrate.Apply(ctx, clients, plan, func(i int, s migrate.Step, err error) {
		_ = migrate.WriteResult(out, i, s, err)
	})
	if err := errors.Join(err, plan.WriteLeft(out)); err != nil {
		return err
	}
	switch n := plan.Pending(); {
	case len(plan.Steps) == 0:
		fmt.Fprintln(out, "\nNothing to do.")
	case n > 0:
		return fmt.Errorf("%d of %d steps wait (see above): run osm-apiserver migrate --apply again once they can go ahead", n, len(plan.Steps))
	default:
		fmt.Fprintln(out, "\nDone.")
	}
	return nil
}

func (o *migrateOptions) clients() (migrate.Clients, error) {
	management, err := options.RESTConfig(o.kubeconfig)
	if err != nil {
		return migrate.Clients{}, fmt.Errorf("--kubeconfig: %w", err)
	}
	worker := management
	if o.workerKubeconfig != "" {
		if worker, err = options.RESTConfig(o.workerKubeconfig); err != nil {
			return migrate.Clients{}, fmt.Errorf("--worker-cluster-kubeconfig: %w", err)
		}
	}
	c := migrate.Clients{Separate: o.workerKubeconfig != ""}
	var errs [5]error
	for _, cfg := range []*rest.Config{management, worker} {
		cfg.QPS, cfg.Burst = 50, 100
	}
	c.Management, errs[0] = kubernetes.NewForConfig(management)
	c.Worker, errs[1] = kubernetes.NewForConfig(worker)
	c.ManagementDynamic, errs[2] = dynamic.NewForConfig(management)
	c.WorkerDynamic, errs[3] = dynamic.NewForConfig(worker)
	c.OSM, errs[4] = versioned.NewForConfig(management)
	return c, errors.Join(errs[:]...)
}
