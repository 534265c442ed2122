package machinejoin

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/osm-apiserver/osm-apiserver/pkg/apis/osm"
	"github.com/osm-apiserver/osm-apiserver/pkg/nodejoin"
)

// joiner answers with answer and err, and remembers the request.
type joiner struct {
	answer *nodejoin.Answer
	err    error
	got    nodejoin.Request
}

func (j *joiner) Join(_ context.Context, r nodejoin.Request) (*nodejoin.Answer, error) {
	j.got = r
	return j.answer, j.err
}

func TestCreate(t *testing.T) {
	expiration := time.Date(2026, 11, 25, 11, 0, 0, 0, time.UTC)
	answer := &nodejoin.Answer{Kubeconfig: []byte("kubeconfig"), Expiration: expiration, Provisioning: []byte("#cloud-config\n"), ProvisioningFormat: osm.PayloadFormatCloudInit,
		Profile: osm.ProfileReference{Namespace: "kube-system", Name: "osp-ubuntu", Version: "v1.6.0", Defaulted: true}, Revision: "4"}
	valid := osm.MachineJoinSpec{MachineName: "pool-5d8f7-x2k4q", BootID: "0f3c2a4e-9b1d-4c55-8f0e-2d6b7a9c1e3f", BootSecret: "9f86d081884c7d659a2feaa0c55ad015"}
	for _, tc := range []struct {
		name     string
		spec     osm.MachineJoinSpec
		meta     string
		dryRun   bool
		err      error
		wantCode int32
		wantMsg  string
	}{
		{name: "answered", spec: valid},
		{name: "refused", spec: valid, err: &nodejoin.RefusedError{Reason: "machine team/pool-5d8f7-x2k4q has joined as node pool-5d8f7-x2k4q"},
			wantCode: http.StatusForbidden, wantMsg: "has joined as node"},
		{name: "unavailable", spec: valid, err: &nodejoin.UnavailableError{Reason: "not listed yet"},
			wantCode: http.StatusServiceUnavailable, wantMsg: "cannot be answered yet: not listed yet"},
		{name: "failed", spec: valid, err: errors.New("etcd is down"), wantCode: http.StatusInternalServerError, wantMsg: "etcd is down"},
		{name: "no machine", spec: osm.MachineJoinSpec{BootID: valid.BootID}, wantCode: http.StatusUnprocessableEntity, wantMsg: "spec.machineName: Required"},
		{name: "invalid machine", spec: osm.MachineJoinSpec{MachineName: "<MACHINE_NAME>", BootID: valid.BootID}, wantCode: http.StatusUnprocessableEntity, wantMsg: "spec.machineName: Invalid"},
		{name: "no boot", spec: osm.MachineJoinSpec{MachineName: valid.MachineName}, wantCode: http.StatusUnprocessableEntity, wantMsg: "spec.bootID: Invalid"},
		{name: "no boot secret (older profiles)", spec: osm.MachineJoinSpec{MachineName: valid.MachineName, BootID: valid.BootID}},
		{name: "short boot secret", spec: osm.MachineJoinSpec{MachineName: valid.MachineName, BootID: valid.BootID, BootSecret: "guessable"},
			wantCode: http.StatusUnprocessableEntity, wantMsg: "spec.bootSecret: Invalid value: \"(not shown)\""},
		{name: "other name", spec: valid, meta: "other", wantCode: http.StatusUnprocessableEntity, wantMsg: "metadata.name: Invalid"},
		{name: "dry run", spec: valid, dryRun: true, wantCode: http.StatusBadRequest, wantMsg: "cannot be a dry run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &joiner{answer: answer, err: tc.err}
			ctx := genericapirequest.WithNamespace(context.Background(), "team")
			ctx = genericapirequest.WithUser(ctx, &user.DefaultInfo{Name: "system:serviceaccount:osm-fetch:osm-fetch-x"})
			opts := &metav1.CreateOptions{}
			if tc.dryRun {
				opts.DryRun = []string{metav1.DryRunAll}
			}
			obj, err := NewREST(j).Create(ctx, &osm.MachineJoin{ObjectMeta: metav1.ObjectMeta{Name: tc.meta}, Spec: tc.spec}, nil, opts)
			if tc.wantCode != 0 {
				var status apierrors.APIStatus
				if !errors.As(err, &status) || status.Status().Code != tc.wantCode || !strings.Contains(status.Status().Message, tc.wantMsg) {
					t.Fatalf("error %v, want %d with %q", err, tc.wantCode, tc.wantMsg)
				}
				if tc.wantCode == http.StatusServiceUnavailable && status.Status().Details.RetryAfterSeconds == 0 {
					t.Error("503 without Retry-After")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if j.got.Namespace != "team" || j.got.MachineName != valid.MachineName || j.got.BootID != valid.BootID || j.got.BootSecret != tc.spec.BootSecret ||
				j.got.User.GetName() != "system:serviceaccount:osm-fetch:osm-fetch-x" {
				t.Errorf("request %+v", j.got)
			}
			out := obj.(*osm.MachineJoin)
			if out.Spec.BootSecret != "" {
				t.Error("the answer gives the boot secret back")
			}
			if out.Name != valid.MachineName || out.Namespace != "team" || string(out.Status.Kubeconfig) != "kubeconfig" ||
				!out.Status.ExpirationTimestamp.Time.Equal(expiration) || string(out.Status.Provisioning) != "#cloud-config\n" ||
				out.Status.ProvisioningFormat != osm.PayloadFormatCloudInit || out.Status.MachineDeploymentRevision != "4" ||
				out.Status.Profile != (osm.ProfileReference{Namespace: "kube-system", Name: "osp-ubuntu", Version: "v1.6.0"}) {
				t.Errorf("answer %+v", out)
			}
		})
	}
}
