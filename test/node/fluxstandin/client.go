package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
)

// scopeEnv names the batch job a client runs in: the double's stand-in for
// the nested instance of flux batch.
const scopeEnv = "FLUX_STANDIN_SCOPE"

// clientURI is the instance a command talks to: FLUX_URI, else the system
// instance's socket, as flux_open does.
func clientURI() string {
	if u := os.Getenv("FLUX_URI"); u != "" {
		return u
	}
	return "local:///run/flux/local"
}

// respError is an error answer of the broker.
type respError struct{ resp response }

func (e respError) Error() string { return e.resp.Error }

// call sends req to the broker at uri and hands each response to each,
// until the final one.
func call(uri string, req request, each func(response) error) error {
	path, ok := strings.CutPrefix(uri, "local://")
	if !ok {
		return notImplemented("FLUX_URI " + uri + " (only local://)")
	}
	c, err := net.Dial("unix", path)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			return fmt.Errorf("Unable to connect to Flux: broker socket %s was not found", path)
		}
		return fmt.Errorf("Unable to connect to Flux: %s: %s", path, errnoText(err))
	}
	defer func() { _ = c.Close() }() // the answer, or the error, is already in hand
	if req.Scope == "" {
		req.Scope = os.Getenv(scopeEnv)
	}
	b, _ := json.Marshal(req)
	if _, err := c.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%s: %s", path, errnoText(err))
	}
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		var resp response
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
			return fmt.Errorf("malformed response: %s", err)
		}
		if resp.Error != "" {
			return respError{resp}
		}
		if each != nil {
			if err := each(resp); err != nil {
				return err
			}
		}
		if resp.Final {
			return nil
		}
	}
	return fmt.Errorf("lost connection to the broker at %s", path)
}

// call1 sends req and returns the final response.
func call1(req request) (response, error) {
	var last response
	err := call(clientURI(), req, func(r response) error { last = r; return nil })
	return last, err
}
