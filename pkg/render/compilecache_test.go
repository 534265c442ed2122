package render

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestCompileCache(t *testing.T) {
	in := goldenInput(t)
	c := newCompileCache(2)
	first, err := c.get(in.OSP, nil, "containerd")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.get(in.OSP.DeepCopy(), nil, "containerd"); again != first {
		t.Error("the same OSP content was parsed twice")
	}
	if other, _ := c.get(in.OSP, nil, "docker"); other == first {
		t.Error("another container runtime reused the containerd parse")
	}

	// From the API server, revisions are told apart by uid and resourceVersion.
	osp := in.OSP.DeepCopy()
	osp.UID, osp.ResourceVersion = types.UID("u1"), "1"
	v1, _ := c.get(osp, nil, "containerd")
	osp.ResourceVersion = "2"
	osp.Spec.ProvisioningConfig.Files[0].Content.Inline.Data = "{{ .Nope"
	if _, err := c.get(osp, nil, "containerd"); err == nil {
		t.Error("a new revision with a broken template parsed")
	}
	if c.len() != 2 {
		t.Errorf("cache holds %d revisions, want its bound 2", c.len())
	}
	osp.ResourceVersion = "1"
	if again, _ := c.get(osp, nil, "containerd"); again != v1 {
		t.Error("a recent revision was parsed again")
	}
	if again, _ := c.get(in.OSP, nil, "containerd"); again == first {
		t.Error("the least recently used revision was not evicted")
	}
}
