// Package egress is the node test's stand-in for konnectivity: an HTTP CONNECT
// proxy that kube-apiserver's "cluster" egress dials, and the table that
// routes its CONNECTs to a Node's InternalIP on the kubelet port to the host
// forward of that node's VM (QEMU's user networking: the host cannot route to
// the guests).
package egress

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Proxy serves HTTP CONNECTs; Route decides where each goes.
type Proxy struct {
	// Route returns the address a CONNECT to target is dialled at, or "" and
	// why it is refused (403).
	Route func(target string) (to, why string)
	// Refused is told of each refusal, DialFailed of each CONNECT whose dial
	// failed (502). Either may be nil.
	Refused    func(target, why string)
	DialFailed func(target string, err error)
}

// Serve handles l's connections until l is closed.
func (p *Proxy) Serve(l net.Listener) error {
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go p.handle(c)
	}
}

func (p *Proxy) handle(c net.Conn) {
	defer func() { _ = c.Close() }()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		p.refuse(c, req.Method+" "+req.RequestURI, "not a CONNECT")
		return
	}
	target := req.Host
	to, why := p.Route(target)
	if to == "" {
		p.refuse(c, target, why)
		return
	}
	up, err := net.DialTimeout("tcp", to, 10*time.Second)
	if err != nil {
		_, _ = fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		if p.DialFailed != nil {
			p.DialFailed(target, err)
		}
		return
	}
	defer func() { _ = up.Close() }()
	if _, err := fmt.Fprintf(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, br); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

func (p *Proxy) refuse(c net.Conn, target, why string) {
	if p.Refused != nil {
		p.Refused(target, why)
	}
	_, _ = fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
}

// Dial opens a tunnel to target through the proxy at network/addr, as
// kube-apiserver does.
func Dial(network, addr, target string) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target); err != nil {
		_ = c.Close()
		return nil, err
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("CONNECT %s: %w", target, err)
	}
	_ = resp.Body.Close() // a 200 to a CONNECT has none; the tunnel follows
	if resp.StatusCode != http.StatusOK {
		_ = c.Close()
		return nil, fmt.Errorf("CONNECT %s: %s", target, resp.Status)
	}
	if br.Buffered() > 0 {
		_ = c.Close()
		return nil, fmt.Errorf("CONNECT %s: data after the proxy's answer", target)
	}
	return c, nil
}
