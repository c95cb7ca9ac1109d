package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestBindAddress(t *testing.T) {
	cases := map[string]struct {
		reason  string
		uri     string
		want    string
		wantErr string
	}{
		"Interface": {
			reason: "An interface name binds its IPv4 address, as ZeroMQ does for tcp://eth0:%p.",
			uri:    "tcp://lo:8050",
			want:   "127.0.0.1:8050",
		},
		"Wildcard": {
			reason: "* is every interface.",
			uri:    "tcp://*:8050",
			want:   ":8050",
		},
		"Numeric": {
			reason: "A numeric address is itself.",
			uri:    "tcp://127.0.0.1:9",
			want:   "127.0.0.1:9",
		},
		"NoSuchInterface": {
			reason:  "A pod without that interface cannot bind: ENODEV.",
			uri:     "tcp://eth9:8050",
			wantErr: "error binding to tcp://eth9:8050: No such device",
		},
		"HostName": {
			reason:  "ZeroMQ does not look host names up to bind; neither does the double.",
			uri:     "tcp://localhost:8050",
			wantErr: "error binding to tcp://localhost:8050: No such device",
		},
		"IPC": {
			reason:  "The double has no ipc transport.",
			uri:     "ipc:///tmp/x",
			wantErr: "overlay URI ipc:///tmp/x (only tcp://) is not implemented by the test double",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := bindAddress(tc.uri, false)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("%s\nerror: -want, +got:\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}
