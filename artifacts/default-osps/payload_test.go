package defaultosps

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	ignition "github.com/coreos/ignition/v2/config"
	v30 "github.com/coreos/ignition/v2/config/v3_0"
	v31 "github.com/coreos/ignition/v2/config/v3_1"
	v32 "github.com/coreos/ignition/v2/config/v3_2"
	v33 "github.com/coreos/ignition/v2/config/v3_3"
	v34 "github.com/coreos/ignition/v2/config/v3_4"
	v35 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/vcontext/report"
	"github.com/vincent-petithory/dataurl"
	"sigs.k8s.io/yaml"
)

// payloadFile is one file or unit a payload writes, decoded.
type payloadFile struct {
	path    string
	content string
	mode    os.FileMode // the file's permissions; 0 for units and files that set none
}

// cloudConfigFiles decodes the write_files and coreos units of a #cloud-config.
func cloudConfigFiles(userData []byte) ([]payloadFile, error) {
	var cc struct {
		WriteFiles []struct {
			Path        string `json:"path"`
			Encoding    string `json:"encoding"`
			Content     string `json:"content"`
			Permissions string `json:"permissions"`
		} `json:"write_files"`
		CoreOS struct {
			Units []struct {
				Name    string `json:"name"`
				Content string `json:"content"`
			} `json:"units"`
		} `json:"coreos"`
	}
	if err := yaml.Unmarshal(userData, &cc); err != nil {
		return nil, fmt.Errorf("cloud-config: %w", err)
	}
	var files []payloadFile
	for _, f := range cc.WriteFiles {
		content := f.Content
		switch f.Encoding {
		case "":
		case "b64", "base64":
			b, err := base64.StdEncoding.DecodeString(f.Content)
			if err != nil {
				return nil, fmt.Errorf("write_files %s: %w", f.Path, err)
			}
			content = string(b)
		default:
			return nil, fmt.Errorf("write_files %s: unexpected encoding %q", f.Path, f.Encoding)
		}
		var mode uint64
		if f.Permissions != "" {
			var err error
			if mode, err = strconv.ParseUint(f.Permissions, 8, 32); err != nil {
				return nil, fmt.Errorf("write_files %s: permissions %q: %w", f.Path, f.Permissions, err)
			}
		}
		files = append(files, payloadFile{path: f.Path, content: content, mode: os.FileMode(mode)})
	}
	for _, u := range cc.CoreOS.Units {
		files = append(files, payloadFile{path: "/etc/systemd/system/" + u.Name, content: u.Content})
	}
	return files, nil
}

// ignitionParsers validate a config of exactly their spec version.
var ignitionParsers = map[string]func([]byte) (report.Report, error){
	"3.0.0": func(b []byte) (report.Report, error) { _, r, err := v30.Parse(b); return r, err },
	"3.1.0": func(b []byte) (report.Report, error) { _, r, err := v31.Parse(b); return r, err },
	"3.2.0": func(b []byte) (report.Report, error) { _, r, err := v32.Parse(b); return r, err },
	"3.3.0": func(b []byte) (report.Report, error) { _, r, err := v33.Parse(b); return r, err },
	"3.4.0": func(b []byte) (report.Report, error) { _, r, err := v34.Parse(b); return r, err },
	"3.5.0": func(b []byte) (report.Report, error) { _, r, err := v35.Parse(b); return r, err },
}

// ignitionFiles validates an Ignition config against the stable 3.x spec it
// declares and decodes its files and units.
func ignitionFiles(userData []byte) ([]payloadFile, error) {
	var head struct {
		Ignition struct {
			Version string `json:"version"`
		} `json:"ignition"`
	}
	if err := json.Unmarshal(userData, &head); err != nil {
		return nil, fmt.Errorf("ignition: %w", err)
	}
	parse, ok := ignitionParsers[head.Ignition.Version]
	if !ok {
		return nil, fmt.Errorf("ignition: version %q is not a stable 3.x spec", head.Ignition.Version)
	}
	if r, err := parse(userData); err != nil || r.IsFatal() {
		return nil, fmt.Errorf("ignition %s: %w: %s", head.Ignition.Version, err, r.String())
	}
	cfg, _, err := ignition.Parse(userData)
	if err != nil {
		return nil, fmt.Errorf("ignition: %w", err)
	}
	var files []payloadFile
	for _, f := range cfg.Storage.Files {
		content, err := ignitionContent(f.Contents.Source, f.Contents.Compression)
		if err != nil {
			return nil, fmt.Errorf("ignition file %s: %w", f.Path, err)
		}
		var mode os.FileMode
		if f.Mode != nil {
			mode = os.FileMode(*f.Mode)
		}
		files = append(files, payloadFile{path: f.Path, content: content, mode: mode})
	}
	for _, u := range cfg.Systemd.Units {
		if u.Contents != nil {
			files = append(files, payloadFile{path: "/etc/systemd/system/" + u.Name, content: *u.Contents})
		}
		for _, d := range u.Dropins {
			if d.Contents != nil {
				files = append(files, payloadFile{path: "/etc/systemd/system/" + u.Name + ".d/" + d.Name, content: *d.Contents})
			}
		}
	}
	return files, nil
}

// ignitionContent decodes a file's data URL, gunzipping it when compressed.
func ignitionContent(source, compression *string) (string, error) {
	if source == nil {
		return "", nil
	}
	u, err := dataurl.DecodeString(*source)
	if err != nil {
		return "", fmt.Errorf("source is not a data URL: %w", err)
	}
	data := u.Data
	if compression != nil && *compression == "gzip" {
		r, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return "", err
		}
		if data, err = io.ReadAll(r); err != nil {
			return "", err
		}
	}
	return string(data), nil
}

// scripts are the files a payload writes that run as shell scripts.
func scripts(files []payloadFile) []payloadFile {
	var out []payloadFile
	for _, f := range files {
		if strings.HasPrefix(f.content, "#!") || strings.HasPrefix(f.path, "/opt/bin/") {
			out = append(out, f)
		}
	}
	return out
}
