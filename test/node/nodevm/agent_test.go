package nodevm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// fakeAgent speaks the guest agent's protocol on a unix socket: it answers a
// sync after a 0xFF, and writes a stale answer first, as an agent does that
// a previous client left with half a conversation.
type fakeAgent struct {
	mu       sync.Mutex
	commands []string
	stdin    []byte
	polls    int
}

func (f *fakeAgent) serve(t *testing.T, l net.Listener) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		f.handle(t, conn)
	}
}

func (f *fakeAgent) handle(t *testing.T, conn net.Conn) {
	defer func() { _ = conn.Close() }()
	r := bufio.NewReader(conn)
	if b, err := r.ReadByte(); err != nil || b != 0xff {
		t.Errorf("the client did not reset the parser with 0xFF first (got %x, %v)", b, err)
		return
	}
	dec := json.NewDecoder(r)
	for {
		var req struct {
			Execute   string          `json:"execute"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := dec.Decode(&req); err != nil {
			return
		}
		f.mu.Lock()
		f.commands = append(f.commands, req.Execute)
		f.mu.Unlock()
		var reply any
		switch req.Execute {
		case "guest-sync-delimited":
			var args struct {
				ID int64 `json:"id"`
			}
			_ = json.Unmarshal(req.Arguments, &args)
			_, _ = conn.Write([]byte("{\"return\": 4711}\n\xff{\"return\": 1}\n\xff"))
			reply = map[string]int64{"return": args.ID}
		case "guest-ping":
			reply = map[string]any{"return": map[string]any{}}
		case "guest-exec":
			var args struct {
				InputData string `json:"input-data"`
			}
			_ = json.Unmarshal(req.Arguments, &args)
			f.stdin, _ = base64.StdEncoding.DecodeString(args.InputData)
			reply = map[string]any{"return": map[string]int{"pid": 42}}
		case "guest-exec-status":
			f.polls++
			st := map[string]any{"exited": f.polls > 1}
			if f.polls > 1 {
				st["exitcode"] = 3
				st["out-data"] = base64.StdEncoding.EncodeToString([]byte("out"))
				st["err-data"] = base64.StdEncoding.EncodeToString([]byte("err"))
			}
			reply = map[string]any{"return": st}
		case "guest-shutdown":
			continue
		default:
			reply = map[string]any{"error": map[string]string{"class": "CommandNotFound", "desc": req.Execute}}
		}
		data, _ := json.Marshal(reply)
		_, _ = conn.Write(append(data, '\n'))
	}
}

func startFake(t *testing.T) (*Agent, *fakeAgent) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "qga.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	f := &fakeAgent{}
	go f.serve(t, l)
	return &Agent{Socket: sock, CallTimeout: 5 * time.Second}, f
}

func TestAgentExec(t *testing.T) {
	a, f := startFake(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := a.Exec(ctx, "exit 3", []byte("script"))
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 || r.Stdout != "out" || r.Stderr != "err" {
		t.Errorf("Exec = %+v, want exit 3, out, err", r)
	}
	if !bytes.Equal(f.stdin, []byte("script")) {
		t.Errorf("stdin = %q, want %q", f.stdin, "script")
	}
	if _, err := a.Run(ctx, "exit 3"); err == nil {
		t.Error("Run of a failing command: want an error")
	}
}

func TestAgentPingRebootAndErrors(t *testing.T) {
	a, f := startFake(t)
	ctx := context.Background()
	if err := a.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.Reboot(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.call(ctx, "guest-nonsense", nil, nil); err == nil {
		t.Error("an agent error: want an error")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	want := []string{"guest-sync-delimited", "guest-ping", "guest-sync-delimited", "guest-shutdown", "guest-sync-delimited", "guest-nonsense"}
	if len(f.commands) != len(want) {
		t.Fatalf("commands = %q, want %q", f.commands, want)
	}
	for i := range want {
		if f.commands[i] != want[i] {
			t.Fatalf("commands = %q, want %q", f.commands, want)
		}
	}
}

func TestAgentUnreachable(t *testing.T) {
	a := &Agent{Socket: filepath.Join(t.TempDir(), "none.sock")}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := a.Ping(ctx); err == nil {
		t.Error("Ping on a missing socket: want an error")
	}
}
