// Package defaultosps installs the OperatingSystemProfiles osm-apiserver ships
// and keeps them up to date, without ever touching a user's profile: only
// profiles carrying our managed-by label are updated.
package defaultosps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned/typed/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// Installer writes the default profiles into Namespace.
type Installer struct {
	Client    osmclient.OperatingSystemProfilesGetter
	Namespace string
	Profiles  []*ospv1alpha1.OperatingSystemProfile
}

// Install creates missing default profiles and updates ours whose
// spec differs. Profiles of the same name without our label belong to a
// user and are left alone.
func (i *Installer) Install(ctx context.Context) error {
	var errs []error
	for _, p := range i.Profiles {
		if err := i.install(ctx, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Run calls Install until it succeeds or ctx ends, backing off between tries.
func (i *Installer) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 8, Cap: 2 * time.Minute}
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		if err := i.Install(ctx); err != nil {
			logger.Error(err, "Failed to install default OperatingSystemProfiles, will retry")
			return false, nil
		}
		logger.Info("Installed default OperatingSystemProfiles", "count", len(i.Profiles), "namespace", i.Namespace)
		return true, nil
	})
}

func (i *Installer) install(ctx context.Context, p *ospv1alpha1.OperatingSystemProfile) error {
	want := p.DeepCopy()
	want.Namespace = i.Namespace
	want.ResourceVersion = ""
	if want.Labels == nil {
		want.Labels = map[string]string{}
	}
	want.Labels[machinecontroller.ManagedByLabel] = machinecontroller.ManagedByValue

	profiles := i.Client.OperatingSystemProfiles(i.Namespace)
	got, err := profiles.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = profiles.Create(ctx, want, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return nil // Another replica was faster; the next start updates it if needed.
		}
		return wrap(err, "create", want)
	}
	if err != nil {
		return wrap(err, "get", want)
	}
	if got.Labels[machinecontroller.ManagedByLabel] != machinecontroller.ManagedByValue {
		klog.FromContext(ctx).Info("Leaving user's OperatingSystemProfile alone", "profile", klog.KObj(got))
		return nil
	}
	if equality.Semantic.DeepEqual(got.Spec, want.Spec) {
		return nil
	}
	if got.Spec.Version == want.Spec.Version {
		// Profiles are immutable per version: the API server rejects a changed
		// spec without a new version, and so do we, instead of failing later.
		return fmt.Errorf("default operating system profile %s/%s: spec differs from the installed one at the same version %s",
			want.Namespace, want.Name, want.Spec.Version)
	}
	updated := got.DeepCopy()
	updated.Spec = want.Spec
	updated.Labels = want.Labels
	_, err = profiles.Update(ctx, updated, metav1.UpdateOptions{})
	return wrap(err, "update", want)
}

func wrap(err error, verb string, p *ospv1alpha1.OperatingSystemProfile) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("failed to %s default operating system profile %s/%s: %w", verb, p.Namespace, p.Name, err)
}
