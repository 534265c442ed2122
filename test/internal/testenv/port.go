package testenv

import "net"

// FreePort is a TCP port of 127.0.0.1 that nothing listened on a moment ago,
// for a process or forward the test starts next.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}
