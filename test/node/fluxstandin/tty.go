//go:build linux

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isTerminal tells whether f is a terminal, as isatty(3) does: the broker
// runs an interactive shell as initial program only on one.
func isTerminal(f *os.File) bool {
	var t syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), syscall.TCGETS, uintptr(unsafe.Pointer(&t))) //nolint:gosec // G103: ioctl(TCGETS) takes a pointer to the Termios; the standard library has no isatty
	return e == 0
}
