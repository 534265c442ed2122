package informers

import (
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/osm-apiserver/osm-apiserver/pkg/bootreports"
	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
	"github.com/osm-apiserver/osm-apiserver/pkg/tokens"
)

// The payload Secret informer holds whole Secrets: neither the fetch tokens
// (the token informer's) nor the boot reports (kept as metadata only).
func TestPayloadsLeaveReportsAndFetchTokensOut(t *testing.T) {
	selector, err := labels.Parse(payloadSelector)
	if err != nil {
		t.Fatal(err)
	}
	ref := machinecontroller.Ref{Namespace: "ns", Name: "md"}
	for purpose, want := range map[string]bool{
		bootreports.Purpose:      false,
		tokens.PurposeFetch:      false,
		tokens.PurposeKubeconfig: true,
		"bootstrap-config":       true,
	} {
		if got := selector.Matches(labels.Set(ref.Labels(purpose))); got != want {
			t.Errorf("%s: selected %v, want %v", purpose, got, want)
		}
	}
}
