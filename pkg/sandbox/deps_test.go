package sandbox

import (
	"reflect"
	"testing"
	"text/template"
)

// analyzeData has what the cases of TestAnalyze read, named as in the
// template data of pkg/render.
type analyzeData struct {
	KubeVersion         string
	CloudProviderName   string
	HTTPProxy           *string
	NoProxy             *string
	NetworkConfig       *struct{ CIDR string }
	KubeletFeatureGates map[string]bool
	Token               string
}

func (*analyzeData) BootstrapKubeconfig() (string, error) { return "", nil }

func TestAnalyze(t *testing.T) {
	dataSchema := newSchema(reflect.TypeFor[*analyzeData]())
	for _, tc := range []struct {
		text   string
		pure   bool
		fields []string
		named  []string
	}{
		{`plain text`, true, nil, nil},
		{`{{ .KubeVersion }} {{ if eq .CloudProviderName "aws" }}{{ .HTTPProxy }}{{ end }}`, true, []string{"KubeVersion", "CloudProviderName", "HTTPProxy"}, nil},
		{`{{ with .NetworkConfig }}{{ .CIDR }}{{ . }}{{ $.NoProxy }}{{ end }}`, true, []string{"NetworkConfig", "NoProxy"}, nil},
		{`{{ range $k, $v := .KubeletFeatureGates }}{{ $k }}{{ end }}{{ .BootstrapKubeconfig }}`, true, []string{"KubeletFeatureGates", "BootstrapKubeconfig"}, nil},
		{`{{ template "proxy" }}{{ .Token }}`, true, []string{"Token"}, []string{"proxy"}},
		{`{{ toYaml . }}`, false, nil, nil},
		{`{{ $ }}`, false, nil, nil},
		{`{{ define "local" }}{{ .X }}{{ end }}{{ template "local" . }}`, false, nil, nil},
		{`{{ now }}`, false, nil, nil},
		{`{{ randAlphaNum 8 }}`, false, nil, nil},
		{`{{ uuidv4 }}`, false, nil, nil},
		{`{{ semverCompare ">=1.30" .KubeVersion | not }}`, true, []string{"KubeVersion"}, nil},
	} {
		tmpl := template.Must(template.New("t").Funcs(funcMap).Parse(tc.text))
		for _, tt := range tmpl.Templates() {
			rewriteNamedCalls(tt.Tree.Root, map[string]bool{"proxy": true})
		}
		d := analyze(tmpl, dataSchema)
		if d.pure != tc.pure {
			t.Errorf("%s: pure = %v, want %v", tc.text, d.pure, tc.pure)
			continue
		}
		if !tc.pure {
			continue
		}
		var fields []string
		for _, i := range d.fields {
			fields = append(fields, dataSchema.names[i])
		}
		want := map[string]bool{}
		for _, f := range tc.fields {
			want[f] = true
		}
		got := map[string]bool{}
		for _, f := range fields {
			got[f] = true
		}
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(d.named, tc.named) {
			t.Errorf("%s: fields %v named %v, want %v %v", tc.text, fields, d.named, tc.fields, tc.named)
		}
	}
}
