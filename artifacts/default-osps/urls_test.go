package defaultosps

import (
	"regexp"
	"strings"
)

var (
	downloader    = regexp.MustCompile(`\b(curl|wget)\b`)
	insecureFlags = regexp.MustCompile(`(^|\s)(-k|--insecure|--no-check-certificate|-[a-zA-Z]*k[a-zA-Z]*)(\s|$|=)`)
)

// insecureDownloads returns the curl or wget commands in text that skip TLS
// verification. Continued lines are joined first, so a flag on a later line counts.
func insecureDownloads(text string) []string {
	var found []string
	joined := strings.ReplaceAll(text, "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		if downloader.MatchString(line) && insecureFlags.MatchString(line) {
			found = append(found, strings.TrimSpace(line))
		}
	}
	return found
}

var (
	urlPattern     = regexp.MustCompile(`https?://[^\s'"}]+`)
	defaultPattern = regexp.MustCompile(`^\s*\w+=\$\{(OSM_\w+):-([^}]*)\}\s*$`)
)

// downloadDefaults returns the OSM_* variables a script reads with their
// defaults, from lines like `kube_url=${OSM_KUBERNETES_URL:-https://dl.k8s.io/release}`.
func downloadDefaults(script string) map[string]string {
	defaults := map[string]string{}
	for _, line := range strings.Split(script, "\n") {
		if m := defaultPattern.FindStringSubmatch(line); m != nil {
			defaults[m[1]] = m[2]
		}
	}
	return defaults
}

// hardcodedURLs returns the URLs a script uses that no option can redirect:
// anything but the defaults of OSM_* download variables, the kubelet's local
// health endpoint and URLs starting with one of the allowed prefixes (those
// the render options set: API server, proxy).
func hardcodedURLs(script string, allowed ...string) []string {
	var found []string
	for _, line := range strings.Split(script, "\n") {
		if defaultPattern.MatchString(line) {
			continue
		}
		for _, u := range urlPattern.FindAllString(line, -1) {
			if !hasAnyPrefix(u, append(allowed, "http://127.0.0.1:")) {
				found = append(found, u)
			}
		}
	}
	return found
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
