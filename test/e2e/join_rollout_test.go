package e2e

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// rolloutMachines is how many machines of one MD boot at once in
// TestMachineJoinRollout.
const rolloutMachines = 100

// TestMachineJoinRollout: a rollout of 100 new machines of an MD, all booting
// within the same moments, is answered and approved within a minute: every
// machine's MachineJoin through kube-apiserver, at once, then every kubelet's
// CSR. The times go to docs/benchmarks.md.
func TestMachineJoinRollout(t *testing.T) {
	ns := syncerNamespace(t)
	ms := joinMD(t, ns, "rollout")
	names := make([]string, rolloutMachines)
	var wg sync.WaitGroup
	for i := range names {
		names[i] = fmt.Sprintf("rollout-5d8f7-%05d", i)
	}
	for i := range names[:len(names)-1] {
		wg.Go(func() { createMachine(t, ms, names[i]) })
	}
	wg.Wait()
	// Created after all others, so the informers see it last: they have every
	// Machine once it is answered.
	createMachine(t, ms, names[len(names)-1])
	token := userDataToken(t, ns, "rollout")
	eventually(t, 30*time.Second, func() error {
		_, err := joinAs(t, token, ns, names[len(names)-1], "boot-last")
		return err
	})

	latencies := make([]time.Duration, rolloutMachines)
	joins := make([]string, rolloutMachines)
	errs := make([]error, rolloutMachines)
	start := time.Now()
	for i := range names[:len(names)-1] {
		wg.Go(func() {
			t0 := time.Now()
			answer, err := joinAs(t, token, ns, names[i], fmt.Sprintf("boot-%d", i))
			latencies[i], errs[i] = time.Since(t0), err
			if err == nil {
				joins[i] = joinToken(t, answer)
			}
		})
	}
	wg.Wait()
	answered := time.Since(start)
	for i, err := range errs[:len(names)-1] {
		if err != nil {
			t.Fatalf("MachineJoin of %s: %v", names[i], err)
		}
	}
	latencies = latencies[:len(names)-1]
	slices.Sort(latencies)
	percentile := func(p int) time.Duration { return latencies[len(latencies)*p/100].Round(time.Millisecond) }
	t.Logf("%d MachineJoins at once: all answered in %s; latency p50 %s, p90 %s, max %s",
		len(latencies), answered.Round(time.Millisecond), percentile(50), percentile(90), latencies[len(latencies)-1].Round(time.Millisecond))

	csrs := make([]string, len(latencies))
	start = time.Now()
	for i := range csrs {
		wg.Go(func() {
			name, err := kubeletCSR(t, joins[i], names[i])
			csrs[i], errs[i] = name, err
		})
	}
	wg.Wait()
	for i, err := range errs[:len(csrs)] {
		if err != nil {
			t.Fatalf("CSR of %s: %v", names[i], err)
		}
	}
	eventually(t, time.Minute, func() error {
		list, err := env.kube.CertificatesV1().CertificateSigningRequests().List(testContext(t), metav1.ListOptions{})
		if err != nil {
			return err
		}
		pending := map[string]bool{}
		for _, name := range csrs {
			pending[name] = true
		}
		for _, csr := range list.Items {
			for _, c := range csr.Status.Conditions {
				if c.Type == certificatesv1.CertificateApproved {
					delete(pending, csr.Name)
				}
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("%d of %d CSRs not approved", len(pending), len(csrs))
		}
		return nil
	})
	approved := time.Since(start)
	t.Logf("%d kubelet CSRs: all approved %s after the first was made", len(csrs), approved.Round(time.Millisecond))
	if total := answered + approved; total > time.Minute {
		t.Errorf("answering and approving %d machines took %s, more than a minute", rolloutMachines, total.Round(time.Second))
	}
}
