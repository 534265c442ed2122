package nodevm

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Agent talks to the qemu-guest-agent of a VM over the host end of its
// virtio-serial port (a unix socket QEMU listens on). The guest side may be
// down (booting, rebooting) or hold half an answer from an earlier session, so
// every call opens the socket, resets the agent's parser, synchronises with
// guest-sync-delimited and only then sends its command.
type Agent struct {
	Socket string
	// CallTimeout bounds one call when the context has no earlier deadline.
	CallTimeout time.Duration

	mu     sync.Mutex // QEMU's socket takes one client at a time
	nextID atomic.Int64
}

// ExecResult is the outcome of a command run in the guest.
type ExecResult struct {
	ExitCode int
	Stdout   string
	Stderr   string
}

type agentError struct {
	Class string `json:"class"`
	Desc  string `json:"desc"`
}

type agentResponse struct {
	Return json.RawMessage `json:"return"`
	Error  *agentError     `json:"error"`
}

// Ping succeeds once the guest agent answers.
func (a *Agent) Ping(ctx context.Context) error {
	return a.call(ctx, "guest-ping", nil, nil)
}

// Reboot asks the guest to reboot; the agent does not answer it.
func (a *Agent) Reboot(ctx context.Context) error {
	return a.send(ctx, "guest-shutdown", map[string]string{"mode": "reboot"})
}

// Exec runs script with bash in the guest, stdin as its standard input, and
// waits until it exits or ctx ends.
func (a *Agent) Exec(ctx context.Context, script string, stdin []byte) (ExecResult, error) {
	args := map[string]any{
		"path":           "/bin/bash",
		"arg":            []string{"-c", "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/bin\n" + script},
		"capture-output": true,
	}
	if stdin != nil {
		args["input-data"] = base64.StdEncoding.EncodeToString(stdin)
	}
	var started struct {
		PID int `json:"pid"`
	}
	if err := a.call(ctx, "guest-exec", args, &started); err != nil {
		return ExecResult{}, err
	}
	for {
		var st struct {
			Exited   bool   `json:"exited"`
			ExitCode int    `json:"exitcode"`
			Signal   int    `json:"signal"`
			OutData  string `json:"out-data"`
			ErrData  string `json:"err-data"`
		}
		if err := a.call(ctx, "guest-exec-status", map[string]int{"pid": started.PID}, &st); err != nil {
			return ExecResult{}, fmt.Errorf("guest command %d: %w", started.PID, err)
		}
		if st.Exited {
			out, _ := base64.StdEncoding.DecodeString(st.OutData)
			errOut, _ := base64.StdEncoding.DecodeString(st.ErrData)
			r := ExecResult{ExitCode: st.ExitCode, Stdout: string(out), Stderr: string(errOut)}
			if st.Signal != 0 {
				r.ExitCode = 128 + st.Signal
			}
			return r, nil
		}
		select {
		case <-ctx.Done():
			return ExecResult{}, fmt.Errorf("guest command %d: %w", started.PID, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Run is Exec that fails unless the command exits 0; it returns the output.
func (a *Agent) Run(ctx context.Context, script string) (string, error) {
	r, err := a.Exec(ctx, script, nil)
	if err != nil {
		return "", err
	}
	if r.ExitCode != 0 {
		return r.Stdout, fmt.Errorf("guest command exited %d: %s", r.ExitCode, r.Stderr)
	}
	return r.Stdout, nil
}

// call sends one command and decodes its answer's "return" into result.
func (a *Agent) call(ctx context.Context, command string, args, result any) error {
	return a.session(ctx, func(enc *json.Encoder, dec *json.Decoder) error {
		if err := enc.Encode(request(command, args)); err != nil {
			return fmt.Errorf("%s: %w", command, err)
		}
		var resp agentResponse
		if err := dec.Decode(&resp); err != nil {
			return fmt.Errorf("%s: no answer: %w", command, err)
		}
		if resp.Error != nil {
			return fmt.Errorf("%s: %s: %s", command, resp.Error.Class, resp.Error.Desc)
		}
		if result == nil {
			return nil
		}
		return json.Unmarshal(resp.Return, result)
	})
}

// send sends a command that gets no answer.
func (a *Agent) send(ctx context.Context, command string, args any) error {
	return a.session(ctx, func(enc *json.Encoder, _ *json.Decoder) error {
		return enc.Encode(request(command, args))
	})
}

func request(command string, args any) map[string]any {
	r := map[string]any{"execute": command}
	if args != nil {
		r["arguments"] = args
	}
	return r
}

// session connects, synchronises and runs f.
func (a *Agent) session(ctx context.Context, f func(*json.Encoder, *json.Decoder) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	deadline := time.Now().Add(a.callTimeout())
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", a.Socket)
	if err != nil {
		return fmt.Errorf("guest agent %s: %w", a.Socket, err)
	}
	defer func() { _ = conn.Close() }() // nothing buffered is left to lose
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	r := bufio.NewReader(conn)
	if err := a.sync(conn, r); err != nil {
		return fmt.Errorf("guest agent %s: %w", a.Socket, err)
	}
	return f(json.NewEncoder(conn), json.NewDecoder(r))
}

// sync resets the agent's parser (a 0xFF byte), sends guest-sync-delimited and
// skips everything up to the 0xFF the agent writes before its answer, and any
// stale answers, until the answer carries this session's id.
func (a *Agent) sync(w io.Writer, r *bufio.Reader) error {
	id := time.Now().UnixNano()%1e9*1000 + a.nextID.Add(1)%1000
	req, err := json.Marshal(request("guest-sync-delimited", map[string]int64{"id": id}))
	if err != nil {
		return err
	}
	if _, err := w.Write(append([]byte{0xff}, append(req, '\n')...)); err != nil {
		return err
	}
	for {
		if _, err := r.ReadBytes(0xff); err != nil {
			return fmt.Errorf("no sync answer: %w", err)
		}
		line, err := r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("no sync answer: %w", err)
		}
		var resp struct {
			Return int64 `json:"return"`
		}
		if json.Unmarshal(line, &resp) == nil && resp.Return == id {
			return nil
		}
	}
}

func (a *Agent) callTimeout() time.Duration {
	if a.CallTimeout > 0 {
		return a.CallTimeout
	}
	return 30 * time.Second
}
