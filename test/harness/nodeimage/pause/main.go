// Command pause is a pod's sandbox process. The pod's namespaces live as
// long as it does, so it only waits for the runtime to stop it (SIGTERM or
// SIGINT), then exits 0. When the pod shares one PID namespace it is PID 1
// there, so orphans are reparented to it; it reaps them, or they would stay
// zombies until the pod ends.
//
// It is built static, from the standard library only, so that it is the
// whole of its image and needs nothing a registry would have provided.
package main

import (
	"errors"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	// Children that exited before Notify sent no signal we could see.
	reap()
	for s := range sigs {
		if s == syscall.SIGCHLD {
			reap()
			continue
		}
		os.Exit(0)
	}
}

// reap collects every exited child. Signals coalesce, so one SIGCHLD may
// stand for many exits: keep waiting until none is left.
func reap() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil || pid <= 0 {
			return
		}
	}
}
