package syncer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/resolve"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

// tokensPending is how soon a sync is retried when the token informer has not
// seen tokens just created: rendering now would use no tokens at all.
const tokensPending = 200 * time.Millisecond

// sync brings everything of one MachineDeployment up to date. retryAfter > 0
// asks for another sync then (token extension, informer catching up).
func (c *Controller) sync(ctx context.Context, key string) (retryAfter time.Duration, err error) {
	ref, err := machinecontroller.ParseRef(key)
	if err != nil {
		return 0, nil // Not retryable.
	}
	md, err := c.mds.Get(ref.Namespace, ref.Name)
	if apierrors.IsNotFound(err) {
		return 0, c.cleanup(ctx, ref)
	}
	if err != nil {
		return 0, err
	}
	if md.DeletionTimestamp != nil {
		return 0, c.cleanup(ctx, ref)
	}
	// The profile the resolver renders from: a default is that of the OS of
	// the revision's template.
	profile, err := c.revisions.ProfileOf(md, c.cfg.ProfileNamespace)
	if err != nil {
		// Nothing to render until the MD changes, which syncs it again; what
		// it had, it keeps, as after a failed render.
		c.recorder.Eventf(machinecontroller.ObjectReference(md), corev1.EventTypeWarning, ReasonNoDefaultProfile, "Kept the previous payload Secrets: %v", err)
		return 0, nil
	}
	// No tokens or RBAC for an MD whose profile does not exist (yet): the
	// profile's add event syncs it again.
	if _, exists, err := c.cfg.Profiles.GetIndexer().GetByKey(profile.String()); err != nil || !exists {
		c.recorder.Eventf(machinecontroller.ObjectReference(md), corev1.EventTypeWarning, "ProfileNotFound",
			"OperatingSystemProfile %s not found%s", profile, defaultedNote(profile))
		return 0, fmt.Errorf("operating system profile %s of machine deployment %s not found", profile, ref)
	}
	if !c.namespaceReady.Load() {
		// cloud-init-settings is missing or being deleted: runNamespace syncs
		// every MachineDeployment once it is usable again.
		return 0, nil
	}
	// machine-controller dictates the payload Secrets' names: an MD whose
	// names are too long or owned by another MD gets no Secrets at all.
	if err := c.claims.Check(md); err != nil {
		if !isRefusal(err) {
			return 0, err
		}
		return 0, c.refuse(ctx, md, err)
	}

	out := c.resolve(ctx, md)
	switch out.NodeJoin {
	case osm.NodeJoinMachineJoin:
		return c.syncMachineJoin(ctx, md, out)
	case osm.NodeJoinCompatibility:
		return c.syncCompatibility(ctx, md, out)
	}
	// The profile does not parse, or the facts are not known yet: nothing
	// says which credentials its nodes need. What the MD has stays.
	if _, pending := out.Pending(); !pending {
		c.renderFailed(md, out.Err)
	}
	return 0, fmt.Errorf("failed to render machine deployment %s: %w", ref, out.Err)
}

// syncCompatibility writes what nodes read with a profile written for
// upstream OSM: a kubelet bootstrap token the MD's machines share, its
// kubeconfig Secret, the fetch credential and its Role allowing it to GET
// them and the provisioning Secret, and both payload Secrets.
func (c *Controller) syncCompatibility(ctx context.Context, md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered) (time.Duration, error) {
	ref := machinecontroller.RefOf(md)
	kubelet, fetch, err := c.ensureTokens(ctx, ref)
	if err != nil {
		return 0, c.warnWrite(md, err)
	}
	if !c.tokensVisible(ref, kubelet, fetch) {
		return tokensPending, nil
	}
	c.warnCompatibility(md, out)
	provisioning := machinecontroller.SecretName(ref.Name, ref.Namespace, osm.PayloadTypeProvisioning)
	kubeconfig := machinecontroller.KubeletBootstrapSecretName(ref.Name, ref.Namespace)
	readable := []string{provisioning, kubeconfig}
	edge := machinecontroller.CloudProvider(md) == machinecontroller.CloudProviderEdge
	if edge {
		// The join script fetches the bootstrap payload with the same token.
		readable = append(readable, machinecontroller.SecretName(ref.Name, ref.Namespace, osm.PayloadTypeBootstrap))
	}
	if err := c.rbac.Ensure(ctx, ref, readable...); err != nil {
		return 0, c.warnWrite(md, err)
	}
	if err := c.ensureKubeconfig(ctx, md, kubelet); err != nil {
		return 0, c.warnWrite(md, err)
	}
	if err := c.writePayloads(ctx, md, c.resolve(ctx, md), osm.PayloadTypeProvisioning, osm.PayloadTypeBootstrap); err != nil {
		return 0, err
	}
	next := earliest(kubelet.Expiration.Add(-c.cfg.TokenRenewBefore), c.fetch.RenewAt(fetch))
	return max(time.Until(next), time.Second), nil
}

// syncMachineJoin writes what nodes need with a profile that posts a
// MachineJoin: the fetch credential (kube-apiserver lets it through to
// machinejoins by the static node-intake binding, osm-apiserver decides) and
// the bootstrap Secret. The provisioning payload and the kubelet's bootstrap
// kubeconfig are in the exchange's answer, so the MD has no provisioning
// Secret, no kubelet bootstrap token, no kubeconfig Secret and no fetch Role.
// What it had of them in the compatibility mode goes once every Machine of it
// has joined: a machine booted before the switch still reads them.
func (c *Controller) syncMachineJoin(ctx context.Context, md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered) (time.Duration, error) {
	ref := machinecontroller.RefOf(md)
	fetch, err := c.fetch.Ensure(ctx, ref)
	if err == nil {
		// Earlier versions made the fetch token a bootstrap token: revoke it.
		err = c.tokens.DeletePurpose(ctx, ref, tokens.PurposeFetch)
	}
	if err != nil {
		return 0, c.warnWrite(md, err)
	}
	if _, f := c.source.TokensOf(ref); f != fetch.Value {
		return tokensPending, nil
	}
	if _, pending := out.Pending(); pending {
		out = c.resolve(ctx, md)
	}
	if err := c.writePayloads(ctx, md, out, osm.PayloadTypeBootstrap); err != nil {
		return 0, err
	}
	if err := c.removeCompatibility(ctx, md); err != nil {
		return 0, c.warnWrite(md, err)
	}
	return max(time.Until(c.fetch.RenewAt(fetch)), time.Second), nil
}

// writePayloads writes md's payload Secrets of kinds from out, in that order,
// and its edge script; a failed render keeps the Secrets as they are.
func (c *Controller) writePayloads(ctx context.Context, md *clusterv1alpha1.MachineDeployment, out *resolve.Rendered, kinds ...osm.PayloadType) error {
	ref := machinecontroller.RefOf(md)
	if out.Err != nil {
		c.renderFailed(md, out.Err)
		return fmt.Errorf("failed to render machine deployment %s: %w", ref, out.Err)
	}
	c.checkUserDataLimit(md, out)
	// Provisioning first: the node fetches it as soon as machine-controller,
	// seeing the bootstrap Secret, creates a VM.
	for _, kind := range kinds {
		secret, err := payloadSecret(ref, md, out, kind)
		if err != nil {
			return err
		}
		if err := c.applySecret(ctx, md, secret); err != nil {
			return c.warnWrite(md, err)
		}
	}
	if err := c.syncEdgeScript(ctx, md, out); err != nil {
		return c.warnWrite(md, err)
	}
	return nil
}

func (c *Controller) ensureTokens(ctx context.Context, ref machinecontroller.Ref) (kubelet tokens.Token, fetch tokens.FetchToken, err error) {
	// Independent, so made side by side: a new MD waits for fewer round trips.
	var kubeletErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		kubelet, kubeletErr = c.tokens.Ensure(ctx, tokens.Request{
			Ref: ref, Purpose: tokens.PurposeKubelet, Groups: tokens.KubeletGroup,
		})
	}()
	fetch, err = c.fetch.Ensure(ctx, ref)
	<-done
	if err := errors.Join(kubeletErr, err); err != nil {
		return kubelet, fetch, err
	}
	// Earlier versions made the fetch token a bootstrap token, in a group
	// clusters may bind to node bootstrapping: revoke it.
	return kubelet, fetch, c.tokens.DeletePurpose(ctx, ref, tokens.PurposeFetch)
}

// tokensVisible says whether the token informer, which renders read tokens
// through, holds the tokens the syncer just ensured.
func (c *Controller) tokensVisible(ref machinecontroller.Ref, kubelet tokens.Token, fetch tokens.FetchToken) bool {
	k, f := c.source.TokensOf(ref)
	return k == kubelet.Value() && f == fetch.Value
}

func (c *Controller) ensureKubeconfig(ctx context.Context, md *clusterv1alpha1.MachineDeployment, tok tokens.Token) error {
	ref := machinecontroller.RefOf(md)
	f := c.cfg.Facts.Current()
	if f == nil || f.Cluster.ServerURL == "" || f.Cluster.CACert == "" {
		return fmt.Errorf("failed to build bootstrap kubeconfig of %s: the API server URL and CA of the cluster are not known yet", ref)
	}
	secret, err := tokens.KubeconfigSecret(ref, f.Cluster.ServerURL, []byte(f.Cluster.CACert), tok)
	if err != nil {
		return err
	}
	return c.applySecret(ctx, md, secret)
}

// isRefusal says whether err of Claims.Check refuses the MD its Secrets.
func isRefusal(err error) bool {
	_, conflict := errors.AsType[*machinecontroller.ConflictError](err)
	_, tooLong := errors.AsType[*machinecontroller.NameTooLongError](err)
	return conflict || tooLong
}

// resolve renders md through the resolver, turning a panic in a broken
// profile into an error so that one profile cannot take the process down.
func (c *Controller) resolve(ctx context.Context, md *clusterv1alpha1.MachineDeployment) (out *resolve.Rendered) {
	defer func() {
		if r := recover(); r != nil {
			klog.FromContext(ctx).Error(nil, "Render panicked", "machineDeployment", klog.KObj(md), "panic", r)
			out = &resolve.Rendered{Err: fmt.Errorf("render panicked: %v", r)}
		}
	}()
	return c.cfg.Resolver.Resolve(ctx, md)
}

// defaultedNote says, after a profile's name, that the MD names none.
func defaultedNote(p machinecontroller.Profile) string {
	if !p.Defaulted {
		return ""
	}
	return fmt.Sprintf(" (the default for the MD's operating system: the MD names none in %s)", machinecontroller.AnnotationOSP)
}

func earliest(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
