package resolve

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// The syncer's path — resolve an MD, read its payloads, compare digests —
// renders the view once, for its error only; the OSC's config is rendered
// from the view when a reader asks for it, once while the body is kept, and
// holds no secret.
func TestViewConfigRendersOnlyForReaders(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	out := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	if out.Err != nil || out.ViewErr != nil {
		t.Fatalf("render: %v, view: %v", out.Err, out.ViewErr)
	}
	if got := userData(t, out.Bootstrap); !strings.Contains(got, token) {
		t.Fatalf("bootstrap payload %q lacks the real token", got)
	}
	userData(t, out.Provisioning)
	if s := out.Summary(); s.OSName != "ubuntu" {
		t.Errorf("summary %+v", s)
	}
	if calls, views := f.renderer.calls.Load(), f.renderer.views.Load(); calls != 1 || views != 1 {
		t.Fatalf("syncer's path: %d renders and %d of the view, want 1 and 1 (its error only)", calls, views)
	}
	if out.body.config != nil || out.body.unpacked != nil {
		t.Errorf("the render kept a config nobody read yet")
	}

	cfg, err := out.Config()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{token, "0123456789abcdef", "getter-secret-value", "hunter2"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the config shows the secret %q: %s", secret, data)
		}
	}
	if files := cfg.ProvisioningConfig.Files; len(files) != 1 || !strings.Contains(files[0].Content.Inline.Data, Redacted) || cfg.OSName != "ubuntu" {
		t.Errorf("config %s", data)
	}
	if views := f.renderer.views.Load(); views != 2 {
		t.Errorf("%d renders of the view after the first read of the config, want 2", views)
	}
	again, err := out.Config()
	if err != nil || again != cfg {
		t.Errorf("second read: %p (%v), want the kept %p", again, err, cfg)
	}
	if peek, err := out.PeekConfig(); err != nil || peek != cfg {
		t.Errorf("peek: %p (%v), want the kept %p", peek, err, cfg)
	}
	if calls, views := f.renderer.calls.Load(), f.renderer.views.Load(); calls != 1 || views != 2 {
		t.Errorf("after reading the config three times: %d renders, %d of the view, want 1 and 2", calls, views)
	}
	if _, bytes := f.resolver.cache.Bodies(); bytes < out.cost() || out.cost() <= int64(configSize(cfg)) {
		t.Errorf("the kept config is not charged to the budget: %d bytes kept, body %d", bytes, out.cost())
	}
}

// A review peeks at the config: rendered for it, not kept.
func TestPeekConfigKeepsNothing(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	out := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	cfg, err := out.PeekConfig()
	if err != nil || cfg.OSName != "ubuntu" {
		t.Fatalf("peek: %+v, %v", cfg, err)
	}
	if out.body.unpacked != nil {
		t.Errorf("a peek kept the config")
	}
	if views := f.renderer.views.Load(); views != 2 {
		t.Errorf("%d renders of the view, want 2", views)
	}
}

// A body the budget dropped is not rendered again for a reader of the config:
// only the view is.
func TestViewConfigOfADroppedBody(t *testing.T) {
	f := newFixture(t, osp("kube-system", "osp-ubuntu", "v1.0.0", "1"))
	out := f.resolver.Resolve(context.Background(), md("osp-ubuntu"))
	out.drop()
	cfg, err := out.Config()
	if err != nil || cfg.OSName != "ubuntu" {
		t.Fatalf("config: %+v, %v", cfg, err)
	}
	if calls, views := f.renderer.calls.Load(), f.renderer.views.Load(); calls != 1 || views != 2 {
		t.Errorf("%d renders, %d of the view, want 1 and 2", calls, views)
	}
	if out.body != nil {
		t.Errorf("the config was kept without the payloads")
	}
	if got := userData(t, out.Bootstrap); !strings.Contains(got, token) {
		t.Errorf("payload after the drop: %q", got)
	}
}

// An MD whose payloads render but whose view fails shows the view's error
// at once, without a reader asking for the config, and its config holds the
// summary only.
func TestViewErrorIsKnownWithoutAReader(t *testing.T) {
	f := newFixture(t, osp("kube-system", "viewfails", "v1.0.0", "1"))
	out := f.resolver.Resolve(context.Background(), md("viewfails"))
	if out.Err != nil || out.ViewErr == nil || !strings.Contains(out.ViewErr.Error(), "placeholder is no token") {
		t.Fatalf("render: %v, view: %v", out.Err, out.ViewErr)
	}
	cfg, err := out.Config()
	if err != nil || cfg.OSName != "ubuntu" || len(cfg.ProvisioningConfig.Files) != 0 {
		t.Errorf("config %+v, %v; want the summary only", cfg, err)
	}
	if views := f.renderer.views.Load(); views != 1 {
		t.Errorf("%d renders of the view, want 1", views)
	}
}
