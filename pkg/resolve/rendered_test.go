package resolve

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

func TestPayloadRoundTrip(t *testing.T) {
	for _, data := range []string{"", "#cloud-config\n", strings.Repeat("write_files:\n- path: /opt/x\n", 2000)} {
		p := mustPayload(data)
		if got := userData(t, p); got != data {
			t.Errorf("payload of %d bytes came back as %d bytes", len(data), len(got))
		}
		if p.Size != int64(len(data)) || len(p.SHA256) != 64 {
			t.Errorf("size %d sha256 %q for %d bytes", p.Size, p.SHA256, len(data))
		}
		if len(data) > 1000 && len(p.packed) > len(data)/5 {
			t.Errorf("%d bytes packed into %d", len(data), len(p.packed))
		}
	}
}

func TestEntryConfigRoundTrip(t *testing.T) {
	unit := "[Unit]\nDescription=x\n"
	cfg := &osm.OperatingSystemConfigSpec{
		OSName: "ubuntu", OSVersion: "24.04", ProvisioningUtility: "cloud-init",
		CloudProvider: osm.CloudProviderSpec{Name: "aws"},
		ProvisioningConfig: osm.OSCConfig{
			Files: []osm.File{{Path: "/opt/bin/setup", Content: osm.FileContent{Inline: &osm.FileContentInline{Data: "#!/bin/bash\n"}}}},
			Units: []osm.Unit{{Name: "setup.service", Content: &unit}},
		},
	}
	e, err := NewRendered(osm.ProfileReference{Name: "osp-ubuntu"}, cfg, mustPayload("b"), mustPayload("p"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Config()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, cfg) || e.CloudProvider != "aws" {
		t.Errorf("config came back as %+v (cloud %q)", got, e.CloudProvider)
	}
	if again, err := e.Config(); err != nil || again != got {
		t.Errorf("second read decoded again (%v)", err)
	}

	failed := NewFailed(osm.ProfileReference{Name: "osp-x"}, &osm.OperatingSystemConfigSpec{OSName: "flatcar"}, errors.New("osp-x: template: line 1: unclosed action"))
	if got, err := failed.Config(); err != nil || got.OSName != "flatcar" || failed.Err == nil {
		t.Errorf("failed entry: config %+v, %v, err %v", got, err, failed.Err)
	}
	if got, err := (&Rendered{}).Config(); err != nil || !reflect.DeepEqual(got, &osm.OperatingSystemConfigSpec{}) {
		t.Errorf("empty entry: config %+v, %v", got, err)
	}
}
