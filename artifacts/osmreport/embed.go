// Package osmreport holds osm-report, the script a node's bootstrap installs
// and provisioning steps call around their own steps to report them to
// osm-apiserver as the machine's BootReport (its header says how), embedded
// for the payloads that install it.
package osmreport

import _ "embed" // for Script

// Script is osm-report.
//
//go:embed osm-report
var Script string
