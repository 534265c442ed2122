package servingcert

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// SecretName is the Secret that holds the CA and the serving certificate.
const SecretName = "osm-apiserver-serving-cert"

// Options say which Secret holds what.
type Options struct {
	// Namespace holds the Secret (SecretName).
	Namespace string
	// Names are the serving certificate's DNS names.
	Names []string
	// Validity of new certificates.
	Validity Validity
}

// ServiceNames are the names kube-apiserver and in-cluster clients reach the
// Service namespace/name by: kube-apiserver checks <name>.<namespace>.svc.
func ServiceNames(namespace, name string) []string {
	svc := name + "." + namespace + ".svc"
	return []string{svc, svc + ".cluster.local", name + "." + namespace, name}
}

// Controller keeps the Secret, serves its certificate and keeps the
// APIService's caBundle. Every replica runs one: each write is an update of
// the version it read (or a create that fails if the Secret exists), so a
// replica that read an older Secret than another wrote gets a conflict and
// decides again from the newer one, rather than overwriting it.
type Controller struct {
	opts       Options
	secrets    secretClient
	informer   cache.SharedIndexInformer
	apiService *APIService // nil: no caBundle to keep
	now        func() time.Time

	kick chan struct{}

	mu        sync.Mutex
	cert, key []byte
	listeners []dynamiccertificates.Listener
}

var _ dynamiccertificates.CertKeyContentProvider = &Controller{}
var _ dynamiccertificates.ControllerRunner = &Controller{}

type secretClient interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
	Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error)
	Update(ctx context.Context, s *corev1.Secret, opts metav1.UpdateOptions) (*corev1.Secret, error)
}

// New returns the Controller of the Secret in o.Namespace, which informer
// watches (pkg/informers.NewSecret); apiService, if not nil, gets the CA
// bundle as its caBundle.
func New(client kubernetes.Interface, informer cache.SharedIndexInformer, apiService *APIService, o Options) *Controller {
	c := &Controller{
		opts: o, secrets: client.CoreV1().Secrets(o.Namespace), informer: informer, apiService: apiService,
		now: time.Now, kick: make(chan struct{}, 1),
	}
	// Adding a handler to an informer that has not started cannot fail.
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { c.enqueue() },
		UpdateFunc: func(any, any) { c.enqueue() },
		DeleteFunc: func(any) { c.enqueue() },
	})
	return c
}

// Name implements dynamiccertificates.CertKeyContentProvider.
func (c *Controller) Name() string { return "secret/" + c.opts.Namespace + "/" + SecretName }

// CurrentCertKeyContent implements dynamiccertificates.CertKeyContentProvider:
// nothing until the first sync, so that the server fails closed.
func (c *Controller) CurrentCertKeyContent() ([]byte, []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cert, c.key
}

// AddListener implements dynamiccertificates.Notifier.
func (c *Controller) AddListener(l dynamiccertificates.Listener) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.listeners = append(c.listeners, l)
}

// RunOnce implements dynamiccertificates.ControllerRunner: it reads the
// Secret, creating it if there is none, and serves its certificate. The
// generic server calls it before it serves.
func (c *Controller) RunOnce(ctx context.Context) error {
	_, err := c.sync(ctx, nil)
	return err
}

// Run implements dynamiccertificates.ControllerRunner: it runs the informer
// and syncs on each change of the Secret, when the next renewal is due, and
// every resync (the caBundle is read again), retrying failures with backoff.
func (c *Controller) Run(ctx context.Context, _ int) {
	// Until the informer has synced, sync reads the Secret itself.
	go c.informer.RunWithContext(ctx)
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Minute}
	delay := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		case <-time.After(delay):
		}
		next, err := c.sync(ctx, c.cached())
		if err != nil {
			klog.ErrorS(err, "Failed to keep the serving certificate", "secret", klog.KRef(c.opts.Namespace, SecretName))
			delay = backoff.Step()
			continue
		}
		backoff = wait.Backoff{Duration: time.Second, Factor: 2, Steps: 10, Cap: time.Minute}
		delay = min(max(next.Sub(c.now()), time.Second), resync)
	}
}

// resync bounds the time between two syncs: an APIService whose caBundle
// someone changed is fixed within it.
const resync = 5 * time.Minute

func (c *Controller) enqueue() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// cached is the Secret as the informer has it, nil before it synced or if
// there is none.
func (c *Controller) cached() *corev1.Secret {
	if !c.informer.HasSynced() {
		return nil
	}
	obj, ok, err := c.informer.GetStore().GetByKey(c.opts.Namespace + "/" + SecretName)
	if err != nil || !ok {
		return nil
	}
	s, _ := obj.(*corev1.Secret)
	return s
}

// sync brings the Secret up to date starting from secret (read if nil),
// serves its certificate and keeps the caBundle; it returns when it has
// something to do again. A conflict reads the Secret again and decides anew.
func (c *Controller) sync(ctx context.Context, secret *corev1.Secret) (time.Time, error) {
	ref := klog.KRef(c.opts.Namespace, SecretName)
	for attempt := 0; ; attempt++ {
		if secret == nil {
			s, err := c.secrets.Get(ctx, SecretName, metav1.GetOptions{})
			switch {
			case apierrors.IsNotFound(err):
				s = nil
			case err != nil:
				return time.Time{}, fmt.Errorf("failed to read secret %s: %w", ref, err)
			}
			secret = s
		}
		var data map[string][]byte
		if secret != nil {
			data = secret.Data
		}
		r, err := Plan(data, c.opts.Names, c.opts.Validity, c.now())
		if err != nil {
			return time.Time{}, fmt.Errorf("secret %s: %w", ref, err)
		}
		if len(r.Changes) > 0 {
			err := c.write(ctx, secret, r.Data)
			if (apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)) && attempt < 3 {
				klog.V(2).InfoS("Serving certificate Secret changed meanwhile; reading it again", "secret", ref)
				secret = nil
				continue
			}
			if err != nil {
				return time.Time{}, fmt.Errorf("failed to write secret %s: %w", ref, err)
			}
			klog.InfoS("Serving certificate Secret updated", "secret", ref, "changes", r.Changes,
				"certExpiry", r.CertExpiry.UTC(), "caExpiry", r.CAExpiry.UTC())
		}
		c.serve(r)
		if err := c.syncCABundle(ctx, r.Data[BundleKey]); err != nil {
			return time.Time{}, err
		}
		return r.Next, nil
	}
}

// write creates the Secret (secret nil) or updates the version read.
func (c *Controller) write(ctx context.Context, secret *corev1.Secret, data map[string][]byte) error {
	var err error
	if secret == nil {
		_, err = c.secrets.Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: SecretName, Namespace: c.opts.Namespace, Labels: labels(nil)},
			Type:       corev1.SecretTypeTLS,
			Data:       data,
		}, metav1.CreateOptions{})
		return err
	}
	s := secret.DeepCopy()
	s.Labels, s.Data = labels(s.Labels), data
	_, err = c.secrets.Update(ctx, s, metav1.UpdateOptions{})
	return err
}

// labels are l with the managed-by label admission requires of our writes.
func labels(l map[string]string) map[string]string {
	out := map[string]string{machinecontroller.ManagedByLabel: machinecontroller.ManagedByValue}
	for k, v := range l {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// serve makes r's certificate the one served, telling the listeners if it
// changed, and publishes the expiries.
func (c *Controller) serve(r *Result) {
	metrics.ServingCertExpiry.WithLabelValues("serving").Set(float64(r.CertExpiry.Unix()))
	metrics.ServingCertExpiry.WithLabelValues("ca").Set(float64(r.CAExpiry.Unix()))
	cert, key := r.Data[CertKey], r.Data[KeyKey]
	c.mu.Lock()
	changed := !bytes.Equal(c.cert, cert) || !bytes.Equal(c.key, key)
	c.cert, c.key = cert, key
	listeners := c.listeners
	c.mu.Unlock()
	if !changed {
		return
	}
	klog.InfoS("Serving the certificate of the Secret", "secret", klog.KRef(c.opts.Namespace, SecretName), "expiry", r.CertExpiry.UTC())
	for _, l := range listeners {
		l.Enqueue()
	}
}

func (c *Controller) syncCABundle(ctx context.Context, bundle []byte) error {
	if c.apiService == nil {
		return nil
	}
	return c.apiService.Sync(ctx, bundle)
}
