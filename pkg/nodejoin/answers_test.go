package nodejoin

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/osm-apiserver/osm-apiserver/pkg/machinecontroller/machinecontrollertest"
)

// TestAnswersOf: a machine's answer is read from its join identity, once;
// an identity of an earlier Machine of the name is no answer of this one.
func TestAnswersOf(t *testing.T) {
	ctx := context.Background()
	client := machinecontrollertest.NewClientset()
	ms := machinecontrollertest.MachineSet(machinecontrollertest.MD("team", "pool", "osp-ubuntu", nil), "pool-5d8f7")
	m := machinecontrollertest.Machine(ms, "pool-5d8f7-a")
	a := NewAnswers(client)

	if _, ok, err := a.Of(ctx, m); ok || err != nil {
		t.Fatalf("before the answer: ok=%v err=%v", ok, err)
	}
	at := time.Date(2026, 11, 27, 18, 0, 0, 0, time.UTC)
	sa := newAccount(m, Boot{ID: "b1", Secret: "s1"}, at)
	if _, err := client.CoreV1().ServiceAccounts(Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rec, ok, err := a.Of(ctx, m)
	if !ok || err != nil || !rec.Answered(Boot{ID: "b1", Secret: "s1"}) || rec.Answered(Boot{ID: "b1", Secret: "s2"}) {
		t.Fatalf("after the answer: %+v ok=%v err=%v", rec, ok, err)
	}
	// Kept: the identity is not read again.
	if err := client.CoreV1().ServiceAccounts(Namespace).Delete(ctx, sa.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := a.Of(ctx, m); !ok {
		t.Error("the answer was read again, not kept")
	}
	// A new Machine of the name, with the earlier one's identity.
	if _, err := client.CoreV1().ServiceAccounts(Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	again := m.DeepCopy()
	again.UID = "a-later-machine"
	if rec, ok, err := a.Of(ctx, again); ok || err != nil {
		t.Errorf("a later Machine of the name: %+v ok=%v err=%v, want no answer", rec, ok, err)
	}
}
