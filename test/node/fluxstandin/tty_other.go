//go:build !linux

package main

import "os"

// isTerminal approximates isatty(3) where TCGETS is not at hand: the
// double runs in Linux containers, this only keeps other systems building.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
