package ignition

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
)

func remembers(k itemKey) bool {
	_, ok := verdicts.Get(k)
	return ok
}

// TestVerdicts: a valid unit, drop-in or file is remembered under everything
// its validation reads, an invalid one never; one that differs in any of
// those is validated anew.
func TestVerdicts(t *testing.T) {
	valid := unitWith("verdict.service", ptr(true), nil, ptr(installed))
	if !unitValid(&valid) || !remembers(itemKey{name: valid.Name, contents: installed, hasContents: true, enabled: 1, masked: -1}) {
		t.Fatal("a valid unit is not remembered")
	}
	if !unitValid(&valid) {
		t.Fatal("a remembered unit is not valid")
	}
	// The same contents without an install section, now enabled: a warning.
	for _, u := range []osm.Unit{
		unitWith("verdict.service", ptr(true), nil, ptr("[Service]\nExecStart=/bin/true\n")),
		unitWith("verdict", ptr(true), nil, ptr(installed)),
		unitWith("verdict.service", ptr(true), nil, ptr(installed+"[Service\n")),
	} {
		for range 2 {
			if unitValid(&u) {
				t.Errorf("invalid unit %+v passes", u)
			}
		}
	}
	bad := osm.DropIn{Name: "verdict.conf", Content: "[Service\n"}
	// Twice each: the second call answers from what the first remembered.
	for range 2 {
		if dropInValid(&bad) || remembers(itemKey{dropIn: true, name: bad.Name, contents: bad.Content, hasContents: true}) {
			t.Error("an invalid drop-in passes or is remembered")
		}
	}
	good := osm.DropIn{Name: "verdict.conf", Content: "[Service]\n"}
	for range 2 {
		if !dropInValid(&good) {
			t.Error("a valid drop-in fails")
		}
	}
	if !fileValid("/verdict", 0o644) || !remembers(itemKey{file: true, name: "/verdict", mode: 0o644}) {
		t.Error("a valid file is not remembered")
	}
	for _, f := range []struct {
		path string
		mode int
	}{{"/verdict", 0o4755}, {"/verdict", 0o1204}, {"verdict", 0o644}, {"/verdict/", 0o644}} {
		for range 2 {
			if fileValid(f.path, f.mode) || remembers(itemKey{file: true, name: f.path, mode: f.mode}) {
				t.Errorf("invalid file %s mode %04o passes or is remembered", f.path, f.mode)
			}
		}
	}
	long := unitWith("long.service", nil, nil, ptr("[Service]\n"+strings.Repeat("# comment\n", maxVerdictBytes/8)))
	if !unitValid(&long) || remembers(itemKey{name: long.Name, contents: *long.Content, hasContents: true, enabled: -1, masked: -1}) {
		t.Error("a long unit is invalid or remembered")
	}
}

// TestVerdictsBounded: the remembered verdicts stay within their bounds
// whatever many units renders bring, also concurrently.
func TestVerdictsBounded(t *testing.T) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range maxVerdicts {
				u := unitWith("u"+strconv.Itoa(w)+"-"+strconv.Itoa(i)+".service", nil, nil, ptr("[Service]\n"))
				if !unitValid(&u) {
					t.Errorf("unit %s is invalid", u.Name)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := verdicts.Len(); n > maxVerdicts {
		t.Errorf("%d verdicts remembered, want at most %d", n, maxVerdicts)
	}
}
