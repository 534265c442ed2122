package main

import (
	"encoding/json"
	"testing"
)

func TestConflist(t *testing.T) {
	data, err := conflist("10.244.2.0/24, fd00:10:244:2::/64")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Plugins []struct {
			Type string `json:"type"`
			IPAM struct {
				Type   string                `json:"type"`
				Ranges [][]map[string]string `json:"ranges"`
				Routes []map[string]string   `json:"routes"`
			} `json:"ipam"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Plugins) != 1 || c.Plugins[0].Type != "bridge" || c.Plugins[0].IPAM.Type != "host-local" {
		t.Fatalf("want one bridge plugin with host-local IPAM:\n%s", data)
	}
	ipam := c.Plugins[0].IPAM
	if len(ipam.Ranges) != 2 || ipam.Ranges[0][0]["subnet"] != "10.244.2.0/24" || ipam.Ranges[1][0]["subnet"] != "fd00:10:244:2::/64" {
		t.Errorf("ranges = %v, want one per family", ipam.Ranges)
	}
	if len(ipam.Routes) != 2 || ipam.Routes[0]["dst"] != "0.0.0.0/0" || ipam.Routes[1]["dst"] != "::/0" {
		t.Errorf("routes = %v, want a default route per family", ipam.Routes)
	}
	if _, err := conflist("10.244.2.0/33"); err == nil {
		t.Error("an invalid CIDR: want an error")
	}
}
