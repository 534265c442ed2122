package operatingsystemconfig

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func mustParse(t *testing.T, s string) map[string]string {
	t.Helper()
	set, err := labels.ConvertSelectorToLabelsMap(s)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func equal(a, b []string) bool {
	return slices.Equal(a, b)
}
