package main

import (
	"fmt"
	"net"
	"strings"
)

// splitTCP splits tcp://ADDR:PORT. Only tcp is done: the double has no ipc
// transport.
func splitTCP(uri string) (host, port string, err error) {
	rest, ok := strings.CutPrefix(uri, "tcp://")
	if !ok {
		return "", "", notImplemented("overlay URI " + uri + " (only tcp://)")
	}
	host, port, err = net.SplitHostPort(rest)
	if err != nil {
		return "", "", fmt.Errorf("%s: %s", uri, err)
	}
	return host, port, nil
}

// bindAddress turns a bind URI into the address to listen on, as ZeroMQ
// resolves a bind endpoint: "*" is every interface, a numeric address is
// itself, anything else must be an interface name, whose first IPv4 address
// (or IPv6 one, with enable_ipv6) is used. ZeroMQ does no DNS lookup when
// binding, so neither does the double: a host name fails with ENODEV.
func bindAddress(uri string, ipv6 bool) (string, error) {
	host, port, err := splitTCP(uri)
	if err != nil {
		return "", err
	}
	if host == "*" {
		return net.JoinHostPort("", port), nil
	}
	if ip := net.ParseIP(host); ip != nil {
		return net.JoinHostPort(host, port), nil
	}
	ifc, err := net.InterfaceByName(host)
	if err != nil {
		return "", fmt.Errorf("error binding to %s: No such device", uri)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return "", fmt.Errorf("error binding to %s: %s", uri, err)
	}
	for _, want4 := range []bool{true, false} {
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			if is4 := ipn.IP.To4() != nil; is4 == want4 && (is4 || ipv6) {
				return net.JoinHostPort(ipn.IP.String(), port), nil
			}
		}
	}
	return "", fmt.Errorf("error binding to %s: No such device (interface %s has no usable address)", uri, host)
}
