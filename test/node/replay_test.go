package node

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	osmv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/osm/v1alpha1"
	osmclient "github.com/osm-apiserver/osm-apiserver/pkg/generated/clientset/versioned"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
	"github.com/osm-apiserver/osm-apiserver/test/node/nodevm"
)

// After the node joined, what its user-data holds is worth nothing: the test
// replays the credential of the VM's user-data (the MD's fetch token) and the
// kubelet bootstrap credential the MachineJoin gave the VM (read from its
// disk), as someone who read the user-data or the disk would.

// bearerRE finds the fetch token (a JWT) in osm-bootstrap.
var bearerRE = regexp.MustCompile(`Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)`)

// checkReplayRefused checks, once b's node is Ready, that every credential
// of its user-data and of its join is refused (403 or 401), that no join
// credential is left for the machine, and that neither credential can get a
// client certificate for another node name.
func checkReplayRefused(ctx context.Context, vm *nodevm.VM, b boot) error {
	userData, err := bootstrapUserData(ctx, b.md)
	if err != nil {
		return err
	}
	fetch, err := userDataToken(userData)
	if err != nil {
		return err
	}
	boot, err := env.kube.CoreV1().Nodes().Get(ctx, b.node, metav1.GetOptions{})
	if err != nil {
		return err
	}
	err = whileServing(func() error {
		// The exchange again, as the VM made it: its machine, its boot.
		_, err := asToken(fetch).osm.OsmV1alpha1().MachineJoins(testNamespace).Create(ctx, &osmv1alpha1.MachineJoin{
			Spec: osmv1alpha1.MachineJoinSpec{MachineName: b.node, BootID: boot.Status.NodeInfo.BootID}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("the user-data credential replayed the MachineJoin of %s after the join, want 403: %w", b.node, errOrAnswered(err))
		}
		progress("%s: the user-data credential's MachineJoin after the join: %v", b.name, err)
		_, err = asToken(fetch).osm.OsmV1alpha1().MachineJoins(testNamespace).Create(ctx, &osmv1alpha1.MachineJoin{
			Spec: osmv1alpha1.MachineJoinSpec{MachineName: b.node, BootID: randomHex(16), BootSecret: randomHex(16)}}, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("the user-data credential got a MachineJoin of %s for another boot after the join, want 403: %w", b.node, errOrAnswered(err))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := checkBootSecret(ctx, vm, b); err != nil {
		return err
	}
	kube := asToken(fetch).kube
	for what, call := range map[string]func() error{
		"read the bootstrap Secret": func() error {
			_, err := kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(ctx,
				machinecontroller.SecretName(b.md, testNamespace, osm.PayloadTypeBootstrap), metav1.GetOptions{})
			return err
		},
		"read the provisioning Secret": func() error {
			_, err := kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).Get(ctx,
				machinecontroller.SecretName(b.md, testNamespace, osm.PayloadTypeProvisioning), metav1.GetOptions{})
			return err
		},
		"list Secrets": func() error {
			_, err := kube.CoreV1().Secrets(machinecontroller.CloudInitSettingsNamespace).List(ctx, metav1.ListOptions{})
			return err
		},
	} {
		if err := call(); !apierrors.IsForbidden(err) && !apierrors.IsUnauthorized(err) {
			return fmt.Errorf("the user-data credential may %s, want 403: %w", what, errOrAnswered(err))
		}
	}

	// Nothing of the join is left: no join credential of the machine, and
	// the VM's token is revoked. (A MachineJoin MD never had a bootstrap
	// token, so "none left" would prove nothing here.)
	credential := nodejoin.AccountName(nodejoin.MachineKey{Namespace: testNamespace, Name: b.node})
	if _, err := env.kube.CoreV1().Secrets(nodejoin.Namespace).Get(ctx, credential, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("join credential %s/%s of %s is not deleted: %w", nodejoin.Namespace, credential, b.node, errOrAnswered(err))
	}
	kubeconfig, err := vm.Agent.Run(ctx, "cat /etc/kubernetes/bootstrap-kubelet.conf")
	if err != nil {
		return fmt.Errorf("reading the VM's bootstrap kubeconfig: %w", err)
	}
	join, err := kubeconfigToken([]byte(kubeconfig))
	if err != nil {
		return fmt.Errorf("the VM's bootstrap kubeconfig: %w", err)
	}
	// kube-apiserver caches a successful token authentication for 10 s.
	err = waitFor(ctx, "the VM's join credential revoked", time.Minute, func() (string, error) {
		_, err := asToken(join).kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		if apierrors.IsUnauthorized(err) {
			return "", nil
		}
		return fmt.Sprintf("the join credential still authenticates (%v)", err), nil
	})
	if err != nil {
		return err
	}

	// Neither gets a client certificate for another name.
	for what, token := range map[string]string{"user-data": fetch, "join": join} {
		csr, err := clientCSR(ctx, asToken(token).kube, "system:node:not-"+b.node)
		switch {
		case apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err):
			progress("%s: a CSR for another name with the %s credential: %v", b.name, what, err)
		case err != nil:
			return fmt.Errorf("a CSR with the %s credential: %w", what, err)
		default:
			_ = env.kube.CertificatesV1().CertificateSigningRequests().Delete(ctx, csr.Name, metav1.DeleteOptions{})
			if approved(*csr) {
				return fmt.Errorf("a CSR for another name with the replayed %s credential was approved", what)
			}
			return fmt.Errorf("the replayed %s credential could create CSR %s for another name", what, csr.Name)
		}
	}
	return nil
}

// userDataToken is the fetch token in the bootstrap user-data's osm-bootstrap.
func userDataToken(userData []byte) (string, error) {
	var cfg struct {
		WriteFiles []struct {
			Path     string `json:"path"`
			Encoding string `json:"encoding"`
			Content  string `json:"content"`
		} `json:"write_files"`
	}
	if err := yaml.Unmarshal(userData, &cfg); err != nil {
		return "", fmt.Errorf("bootstrap user-data: %w", err)
	}
	for _, f := range cfg.WriteFiles {
		if f.Path != "/opt/bin/osm-bootstrap" {
			continue
		}
		script := []byte(f.Content)
		var err error
		if f.Encoding == "b64" {
			if script, err = base64.StdEncoding.DecodeString(f.Content); err != nil {
				return "", fmt.Errorf("osm-bootstrap: %w", err)
			}
		}
		if m := bearerRE.FindSubmatch(script); m != nil {
			return string(m[1]), nil
		}
		return "", errors.New("osm-bootstrap holds no token")
	}
	return "", errors.New("the bootstrap user-data writes no /opt/bin/osm-bootstrap")
}

func kubeconfigToken(data []byte) (string, error) {
	cfg, err := clientcmd.Load(data)
	if err != nil {
		return "", err
	}
	for _, u := range cfg.AuthInfos {
		if u.Token != "" {
			return u.Token, nil
		}
	}
	return "", errors.New("no token")
}

type clients struct {
	kube kubernetes.Interface
	osm  osmclient.Interface
}

// asToken returns clients of kube-apiserver authenticated by token only.
func asToken(token string) clients {
	cfg := &rest.Config{Host: env.config.Host, BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: env.config.CAData, CAFile: env.config.CAFile}}
	return clients{kube: kubernetes.NewForConfigOrDie(cfg), osm: osmclient.NewForConfigOrDie(cfg)}
}

// errOrAnswered is err, or says that the request was answered.
func errOrAnswered(err error) error {
	if err == nil {
		return errors.New("answered")
	}
	return err
}

// checkBootSecret checks that the VM's MachineJoin carried the secret its boot
// made (in /run/osm/boot-secret, which only root reads): the join identity
// keeps its sha256, so that only this boot is answered again, not whoever
// knows its boot id.
func checkBootSecret(ctx context.Context, vm *nodevm.VM, b boot) error {
	out, err := vm.Agent.Run(ctx, "stat -c %a /run/osm/boot-secret && cat /run/osm/boot-secret")
	if err != nil {
		return fmt.Errorf("reading the VM's boot secret: %w", err)
	}
	mode, secret, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if mode != "600" || len(secret) != 32 {
		return fmt.Errorf("the VM's /run/osm/boot-secret has mode %s and %d characters, want 600 and 32", mode, len(secret))
	}
	sa, err := env.kube.CoreV1().ServiceAccounts(nodejoin.Namespace).Get(ctx,
		nodejoin.AccountName(nodejoin.MachineKey{Namespace: testNamespace, Name: b.node}), metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("the join identity of %s: %w", b.node, err)
	}
	rec, ok := nodejoin.ParseRecord(sa)
	sum := sha256.Sum256([]byte(secret))
	if !ok || rec.BootSecretHash != hex.EncodeToString(sum[:]) {
		return fmt.Errorf("the join identity of %s records boot secret hash %q, not the hash of the VM's secret", b.node, rec.BootSecretHash)
	}
	progress("%s: the MachineJoin carried the boot's secret: the join identity keeps its sha256, the secret stayed on the VM", b.name)
	return nil
}
