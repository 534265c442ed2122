package bootreport

import (
	"encoding/base64"
	"strings"

	"github.com/osm-apiserver/osm-apiserver/pkg/render"
)

// KnownValues are the credentials the server knows for an MD, which Scrub
// removes from its log tails by value: its kubelet bootstrap token (and the
// token's secret part alone), its fetch token, and the registry
// credentials the server renders into payloads (password, identity token,
// the auth field and the user:password it encodes, and that password).
// "" stands for a token the MD does not have; bootreports.NewKnown leaves
// out values too short to scrub by value.
//
// A machine's join credential (a MachineJoin's answer) is not kept by the
// server; it is a ServiceAccount token, a JWT the patterns find.
func KnownValues(kubelet, fetch string, registries map[string]render.RegistryAuth) []string {
	values := []string{kubelet, fetch}
	if _, secret, ok := strings.Cut(kubelet, "."); ok {
		values = append(values, secret)
	}
	for _, auth := range registries {
		values = append(values, auth.Password, auth.IdentityToken, auth.Auth)
		if auth.Password != "" {
			values = append(values, auth.Username+":"+auth.Password)
		}
		if data, err := base64.StdEncoding.DecodeString(auth.Auth); err == nil {
			values = append(values, string(data))
			if _, password, ok := strings.Cut(string(data), ":"); ok {
				values = append(values, password)
			}
		}
	}
	return values
}
