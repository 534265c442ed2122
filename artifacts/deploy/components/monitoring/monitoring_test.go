// Package monitoring tests the monitoring component's PromQL: every metric its
// alerts and dashboard panels name must be one osm-apiserver exports, so that
// renaming or dropping a metric fails here rather than silencing an alert.
package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	k8smetrics "k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/legacyregistry"
	"sigs.k8s.io/yaml"

	"github.com/osm-apiserver/osm-apiserver/pkg/metrics"
)

// prometheusOwn are series Prometheus makes for each target, not the server.
var prometheusOwn = []string{"up"}

// exported is every series name osm-apiserver's /metrics may serve: its own
// metrics (metrics.Collectors, which a vector exports only once a label value
// was used, so they are named from the collectors; osm-apiserver has no
// summaries, which are deprecated) and whatever else the
// legacy registry gathers after metrics.Register (process and Go runtime
// metrics), with the series a histogram or summary exports.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	metrics.Register()
	names := map[string]bool{}
	for _, n := range prometheusOwn {
		names[n] = true
	}
	add := func(name string, histogram, summary bool) {
		names[name] = true
		if histogram {
			names[name+"_bucket"] = true
		}
		if histogram || summary {
			names[name+"_sum"], names[name+"_count"] = true, true
		}
	}
	for _, c := range metrics.Collectors() {
		switch c.(type) {
		case *k8smetrics.Histogram, *k8smetrics.HistogramVec, *k8smetrics.TimingHistogram, *k8smetrics.TimingHistogramVec:
			add(c.FQName(), true, false)
		default:
			add(c.FQName(), false, false)
		}
	}
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		kind := f.GetType().String()
		add(f.GetName(), kind == "HISTOGRAM" || kind == "GAUGE_HISTOGRAM", kind == "SUMMARY")
	}
	return names
}

// checkExpr returns an error for each metric expr names that is not in
// exported, or for an expression it cannot read; where says which rule or
// panel the expression is.
func checkExpr(where, expr string, exported map[string]bool) []error {
	names, err := metricNames(expr)
	if err != nil {
		return []error{fmt.Errorf("%s: %w", where, err)}
	}
	if len(names) == 0 {
		return []error{fmt.Errorf("%s: names no metric: %q", where, expr)}
	}
	var errs []error
	for _, n := range names {
		if !exported[n] {
			errs = append(errs, fmt.Errorf("%s: metric %s is not exported by osm-apiserver", where, n))
		}
	}
	return errs
}

type prometheusRule struct {
	Spec struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert       string            `json:"alert"`
				Record      string            `json:"record"`
				Expr        string            `json:"expr"`
				Annotations map[string]string `json:"annotations"`
			} `json:"rules"`
		} `json:"groups"`
	} `json:"spec"`
}

func readRules(t *testing.T) prometheusRule {
	t.Helper()
	data, err := os.ReadFile("prometheusrule.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var r prometheusRule
	if err := yaml.Unmarshal(data, &r); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	return r
}

// TestRulesNameExportedMetrics: every alert's expression reads, names only
// metrics osm-apiserver exports, and says what it is about; the alerts
// cover what docs/operating.md promises.
func TestRulesNameExportedMetrics(t *testing.T) {
	names := exported(t)
	r := readRules(t)
	var used []string
	rules := 0
	for _, g := range r.Spec.Groups {
		for i, rule := range g.Rules {
			rules++
			where := fmt.Sprintf("prometheusrule.yaml: group %s, rule %d (%s%s)", g.Name, i, rule.Alert, rule.Record)
			for _, err := range checkExpr(where, rule.Expr, names) {
				t.Error(err)
			}
			if rule.Alert != "" && (rule.Annotations["summary"] == "" || rule.Annotations["description"] == "") {
				t.Errorf("%s: no summary or description annotation", where)
			}
			n, _ := metricNames(rule.Expr)
			used = append(used, n...)
		}
	}
	if rules == 0 {
		t.Fatal("prometheusrule.yaml has no rules")
	}
	for _, want := range []string{
		"osm_apiserver_boot_reports_step_failures_total",    // nodes failing to provision
		"osm_apiserver_machine_join_duration_seconds_count", // joins refused
		"osm_apiserver_render_errors_total",                 // render errors
		"osm_apiserver_syncer_user_data_too_large_total",    // payloads over a cloud's user-data limit
		"osm_apiserver_upstream_osm_installed",              // upstream OSM still installed
		"osm_apiserver_syncer_write_failures_total", "up",   // writes refused; the server down
	} {
		if !slices.Contains(used, want) {
			t.Errorf("no alert reads %s", want)
		}
	}
}

// TestDashboardNamesExportedMetrics: every panel's queries read and name
// only metrics osm-apiserver exports.
func TestDashboardNamesExportedMetrics(t *testing.T) {
	names := exported(t)
	data, err := os.ReadFile("dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboardPanels
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	exprs := 0
	var walk func([]panel)
	walk = func(panels []panel) {
		for _, p := range panels {
			for _, target := range p.Targets {
				exprs++
				for _, err := range checkExpr(fmt.Sprintf("dashboard.json: panel %d %q, target %s", p.ID, p.Title, target.RefID), target.Expr, names) {
					t.Error(err)
				}
			}
			walk(p.Panels) // a row's panels
		}
	}
	walk(d.Panels)
	if exprs == 0 {
		t.Fatal("dashboard.json has no queries")
	}
}

type dashboardPanels struct {
	Panels []panel `json:"panels"`
}

type panel struct {
	ID      int     `json:"id"`
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// TestCheckExprFailsOnUnknownMetrics: the check above fails for a metric
// osm-apiserver does not export, and for an expression it cannot read.
func TestCheckExprFailsOnUnknownMetrics(t *testing.T) {
	names := exported(t)
	if errs := checkExpr("ok", `sum(increase(osm_apiserver_render_errors_total[15m])) > 0`, names); len(errs) != 0 {
		t.Fatalf("a real metric: %v", errs)
	}
	for expr, want := range map[string]string{
		`sum(increase(osm_apiserver_render_errorz_total[15m])) > 0`:                      "metric osm_apiserver_render_errorz_total is not exported",
		`osm_apiserver_machine_join_duration_seconds_bucket_total`:                       "metric osm_apiserver_machine_join_duration_seconds_bucket_total is not exported",
		`osm_apiserver_upstream_osm_installed_count`:                                     "not exported",         // a gauge has no _count
		`histogram_quantile(0.9, rate(osm_apiserver_render_duration_seconds_bucket[5m])`: "unbalanced",           // missing )
		`rat(osm_apiserver_render_errors_total[5m])`:                                     "unknown function rat", // a typo
		`sum by (step) (1)`: "names no metric", // nothing checked
		`{__name__="osm_apiserver_render_errors_total"}`:                      "__name__",     // not read
		`osm_apiserver_render_errors_total{result="error}`:                    "unbalanced {", // the string hides the }
		`label_replace(osm_apiserver_render_errors_total, "a", "b", "c", "d)`: "unterminated string",
		`osm_apiserver_syncer_queue_depth_total > 0`:                          "metric osm_apiserver_syncer_queue_depth_total is not exported", // a gauge has no _total
		`absent(upp{job="osm-apiserver"})`:                                    "metric upp is not exported",
	} {
		errs := checkExpr("test rule", expr, names)
		if len(errs) == 0 || !strings.Contains(fmt.Sprint(errs), want) || !strings.Contains(fmt.Sprint(errs), "test rule") {
			t.Errorf("checkExpr(%q) = %v, want an error naming the rule and containing %q", expr, errs, want)
		}
	}
}

func TestMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`up`: {"up"},
		`sum by (step) (increase(a_total[15m])) > 0 or sum by (step) (a_total unless a_total offset 15m) > 0`: {"a_total"},
		`histogram_quantile(0.99, sum by (le) (rate(b_bucket{x="}", y=~"a|b"}[5m])))`:                         {"b_bucket"},
		`sum(rate(c[5m])) / (sum(rate(c[5m])) + sum(rate(d[$__rate_interval])))`:                              {"c", "d"},
		`max without (instance, pod) (e) * on (job) group_left (version) f`:                                   {"e", "f"},
		`label_replace(g, "dst", "$1", "src", "(.*)") and ignoring (le) h:ratio5m`:                            {"g", "h:ratio5m"},
		`topk(5, i) @ end() - 1e3 + 0x1f + .5 # comment with j`:                                               {"i"},
		`sum(k) by (le)`:                     {"k"},
		`count_values("value", l) == bool 2`: {"l"},
		`m[1h:5m] offset -5m`:                {"m"},
	} {
		got, err := metricNames(expr)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("metricNames(%q) = %q, %v; want %q", expr, got, err, want)
		}
	}
}
