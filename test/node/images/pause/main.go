// Command pause is the node test's sandbox image: it holds a pod's namespaces,
// reaps the zombies it inherits as PID 1, and exits on SIGTERM or SIGINT. Built
// locally because no public registry is reachable from the test's VMs.
//
// It says one line when it starts (what `kubectl logs` must show), and
// `pause hostname` prints the host name it sees and exits: the image has no
// shell, and `kubectl exec <pod> -- /pause hostname` answering the pod's name
// shows the command ran in the pod's UTS namespace.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// StartLine is what pause prints when it starts.
const StartLine = "pause: holding the pod's namespaces"

func main() {
	if len(os.Args) > 1 {
		os.Exit(command(os.Args[1:]))
	}
	signals := make(chan os.Signal, 4)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	fmt.Println(StartLine)
	for s := range signals {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			if pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil); pid <= 0 || err != nil {
				break
			}
		}
	}
}

func command(args []string) int {
	if len(args) != 1 || args[0] != "hostname" {
		fmt.Fprintf(os.Stderr, "usage: pause [hostname]\n")
		return 2
	}
	name, err := os.Hostname()
	if err != nil {
		fmt.Fprintf(os.Stderr, "pause: %v\n", err)
		return 1
	}
	fmt.Println(name)
	return 0
}
