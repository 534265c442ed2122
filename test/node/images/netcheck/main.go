// Command netcheck is the node test's pod-to-pod probe, a static binary on an
// empty base like the pause image (no public registry is reachable from the
// test's VMs, and a shell image would be a hundred times its size).
//
//	netcheck serve PORT    answers every TCP connection on PORT with its host
//	                       name (the pod's name) and closes it
//	netcheck dial ADDR...  connects to each host:port, reads the answer and
//	                       writes "ADDR ANSWER" lines to /dev/termination-log,
//	                       where the pod's status shows them; exits 1 if one
//	                       failed (its line says why)
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: netcheck serve PORT | netcheck dial ADDR...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		os.Exit(serve(os.Args[2]))
	case "dial":
		os.Exit(dial(os.Args[2:]))
	}
	fmt.Fprintln(os.Stderr, "usage: netcheck serve PORT | netcheck dial ADDR...")
	os.Exit(2)
}

func serve(port string) int {
	name, err := os.Hostname()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := net.Listen("tcp", ":"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("netcheck: serving on", l.Addr())
	for {
		c, err := l.Accept()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("netcheck: answered", c.RemoteAddr())
		_, _ = fmt.Fprintln(c, name)
		_ = c.Close()
	}
}

func dial(addrs []string) int {
	var lines []string
	code := 0
	for _, a := range addrs {
		answer, err := ask(a)
		if err != nil {
			code = 1
			answer = "error: " + err.Error()
		}
		lines = append(lines, a+" "+answer)
	}
	out := strings.Join(lines, "\n") + "\n"
	fmt.Print(out)
	if err := os.WriteFile("/dev/termination-log", []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return code
}

// ask retries for a minute: a new pod's IPv6 address may still be in
// duplicate address detection when it starts.
func ask(addr string) (answer string, err error) {
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(2 * time.Second) {
		if answer, err = askOnce(addr); err == nil {
			return answer, nil
		}
	}
	return "", err
}

func askOnce(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 20*time.Second)
	if err != nil {
		return "", err
	}
	defer func() { _ = c.Close() }()
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	b, err := io.ReadAll(io.LimitReader(c, 256))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}
