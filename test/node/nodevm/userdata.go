package nodevm

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller"
)

// blankLines are lines of nothing but spaces and tabs.
var blankLines = regexp.MustCompile(`(?m)^[ \t]+$`)

// MachineUserData turns the user-data of an MD's bootstrap Secret into what
// machine-controller hands the cloud for one Machine: the machine-name
// placeholder replaced (also URL-encoded, as Ignition data URLs carry it) and
// whitespace-only lines emptied, as its cleanupTemplateOutput does (YAML
// forbids lines of only spaces or tabs in some places).
func MachineUserData(secretData []byte, machineName string) []byte {
	const placeholder = machinecontroller.MachineNamePlaceholder
	s := strings.ReplaceAll(string(secretData), placeholder, machineName)
	s = strings.ReplaceAll(s, url.QueryEscape(placeholder), url.QueryEscape(machineName))
	return []byte(blankLines.ReplaceAllString(s, ""))
}
