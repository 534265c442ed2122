package resolve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	clusterv1alpha1 "k8c.io/machine-controller/sdk/apis/cluster/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	ospv1alpha1 "github.com/osm-apiserver/osm-apiserver/pkg/apis/operatingsystemmanager/v1alpha1"
	osplisters "github.com/osm-apiserver/osm-apiserver/pkg/generated/listers/operatingsystemmanager/v1alpha1"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

const (
	kubeletToken = "abcdef.0123456789abcdef"
	fetchToken   = "fetch-token-0123456789"
	// A registry password with the characters a TOML string escapes.
	registryPassword = `pa"ss\word-0123`
	proxyPassword    = "proxy-secret-42"
)

// viewOSP writes the secrets transformed in every way a template can, and
// fails or not depending on what it is given.
func viewOSP(name, files string) *ospv1alpha1.OperatingSystemProfile {
	var spec ospv1alpha1.OperatingSystemProfileSpec
	if err := json.Unmarshal([]byte(`{"osName":"ubuntu","osVersion":"24.04","version":"v1","provisioningUtility":"cloud-init",
		"supportedContainerRuntimes":[{"name":"containerd"}],"supportedCloudProviders":[{"name":"aws"}],
		"bootstrapConfig":{"files":[]},"provisioningConfig":{"files":`+files+`}}`), &spec); err != nil {
		panic(err)
	}
	return &ospv1alpha1.OperatingSystemProfile{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name, UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec:       spec,
	}
}

func file(path, tmpl string) string {
	data, _ := json.Marshal(tmpl)
	return `{"path":"` + path + `","content":{"inline":{"data":` + string(data) + `}}}`
}

func viewMD(profile string) *clusterv1alpha1.MachineDeployment {
	md := &clusterv1alpha1.MachineDeployment{ObjectMeta: metav1.ObjectMeta{
		Namespace: "team", Name: "md-" + profile, UID: types.UID("md-" + profile), ResourceVersion: "1",
		Annotations: map[string]string{machinecontroller.AnnotationOSP: profile},
	}}
	md.Spec.Template.Spec.Versions.Kubelet = "1.33.4"
	md.Spec.Template.Spec.ProviderSpec.Value = &runtime.RawExtension{Raw: []byte(`{"cloudProvider":"aws",` +
		`"cloudProviderSpec":{"secretAccessKey":"aws-secret-0123"},"operatingSystem":"ubuntu","operatingSystemSpec":{}}`)}
	return md
}

// The view of a config (the OSC, its status and errors) is rendered from
// placeholders: no transformation of a secret by a template reaches it, while
// the payloads keep the real values.
func TestViewHasNoSecretsWhateverTheTemplateDoes(t *testing.T) {
	leaky := "[" + strings.Join([]string{
		file("/etc/tokens", `{{ .Token }} {{ .Token | b64enc }} {{ upper .Token }} {{ replace "-" "_" .Token }} {{ .BootstrapKubeconfig | b64enc }} {{ .BootstrapKubeconfig }}`),
		file("/etc/containerd-copy", `{{ .ContainerRuntimeConfig }} {{ .ContainerRuntimeConfig | b64enc }}`),
		file("/etc/proxy", `{{ .HTTPProxy }} {{ .HTTPProxy | b64enc }} {{ .HTTPProxy | upper }}`),
		file("/etc/cloud", `{{ .CloudConfig }}`),
	}, ",") + "]"
	osps := []*ospv1alpha1.OperatingSystemProfile{
		viewOSP("leaky", leaky),
		viewOSP("fails", "["+file("/etc/x", `{{ fail (printf "tok=%s" .Token) }}`)+"]"),
		viewOSP("depends", "["+file("/etc/x", `{{ if hasPrefix "fetch" .Token }}{{ fail (printf "real %s" .Token) }}{{ end }}`)+"]"),
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, o := range osps {
		if err := indexer.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	f := &fakeFacts{}
	f.set(t, render.ClusterInfo{ServerURL: "https://10.0.0.1:6443", CACert: "ca"}, render.NodeOptions{
		ClusterDNSIPs: []string{"10.10.10.10"}, ContainerRuntime: "containerd",
		HTTPProxy:           "http://user:" + proxyPassword + "@proxy:3128",
		RegistryCredentials: map[string]render.RegistryAuth{"registry.example.com": {Username: "u", Password: registryPassword, Auth: base64.StdEncoding.EncodeToString([]byte("u:" + registryPassword))}},
	})
	r := New(Config{
		ProfileNamespace: "kube-system",
		Profiles:         osplisters.NewOperatingSystemProfileLister(indexer),
		Facts:            f,
		Tokens:           StaticTokens{Kubelet: kubeletToken, Fetch: fetchToken},
	})
	secretForms := func(s string) []string {
		return []string{s, base64.StdEncoding.EncodeToString([]byte(s)), strings.ToUpper(s), strings.ReplaceAll(s, "-", "_")}
	}
	var forbidden []string
	for _, s := range []string{kubeletToken, "0123456789abcdef", fetchToken, proxyPassword, registryPassword, `pa\"ss\\word-0123`, "aws-secret-0123"} {
		forbidden = append(forbidden, secretForms(s)...)
	}
	check := func(what, s string) {
		t.Helper()
		for _, secret := range forbidden {
			if strings.Contains(s, secret) {
				t.Errorf("%s shows the secret %q:\n%s", what, secret, s)
			}
		}
	}

	out := r.Resolve(context.Background(), viewMD("leaky"))
	if out.Err != nil || out.ViewErr != nil {
		t.Fatalf("render: %v, view: %v", out.Err, out.ViewErr)
	}
	cfg, err := out.Config()
	if err != nil {
		t.Fatal(err)
	}
	view, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	check("the OSC", string(view))
	// The summary tables show comes from the real render: it must be the view's.
	if s := out.Summary(); s.OSName != cfg.OSName || s.OSVersion != cfg.OSVersion || s.CloudProvider.Name != cfg.CloudProvider.Name ||
		s.ProvisioningUtility != cfg.ProvisioningUtility || s.CloudProvider.Name != "aws" {
		t.Errorf("summary %+v differs from the view's config", s)
	}
	if !strings.Contains(string(view), render.RedactedToken) || !strings.Contains(string(view), render.Redacted) {
		t.Errorf("no placeholder in the view:\n%s", view)
	}
	payload, err := out.Provisioning.UserData()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{fetchToken, strings.ToUpper(fetchToken), base64.StdEncoding.EncodeToString([]byte(fetchToken))} {
		if !strings.Contains(string(payload), want) {
			t.Errorf("the payload lacks %q: it must keep the real values", want)
		}
	}

	failed := r.Resolve(context.Background(), viewMD("fails"))
	if failed.Err == nil || !strings.Contains(failed.Err.Error(), "tok="+render.RedactedToken) {
		t.Fatalf("error %v, want the view's error with the placeholder", failed.Err)
	}
	check("the render error", failed.Err.Error())

	depends := r.Resolve(context.Background(), viewMD("depends"))
	if !errors.Is(depends.Err, errSecretDependent) {
		t.Fatalf("error %v, want the withheld error of a secret-dependent render", depends.Err)
	}
	check("the secret-dependent error", depends.Err.Error())
}
