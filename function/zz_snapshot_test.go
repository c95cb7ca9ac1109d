package function_test

// TEMPORARY: snapshot of responses, to check optimisations change no byte.

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/flux-framework/minicluster-crossplane/function"
)

func snapRun(t *testing.T, req *fnv1.RunFunctionRequest) []byte {
	fn := function.New(function.WithRandom(bytes.NewReader(bytes.Repeat([]byte{7}, 64))))
	rsp, err := fn.RunFunction(context.Background(), proto.Clone(req).(*fnv1.RunFunctionRequest))
	if err != nil {
		t.Fatal(err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(rsp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func setField(t *testing.T, r *fnv1.Resource, v any, path ...string) {
	m := r.GetResource().AsMap()
	cur := m
	for _, p := range path[:len(path)-1] {
		n, ok := cur[p].(map[string]any)
		if !ok {
			n = map[string]any{}
			cur[p] = n
		}
		cur = n
	}
	cur[path[len(path)-1]] = v
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	r.Resource = s
}

func TestZZSnapshot(t *testing.T) {
	dir := os.Getenv("SNAP_DIR")
	if dir == "" {
		t.Skip()
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, ex := range exampleNames(t) {
		xr := exampleXR(t, ex)
		write(ex+".first", snapRun(t, firstRequest(t, xr)))
		st := steadyRequest(t, exampleXR(t, ex))
		write(ex+".steady", snapRun(t, st))
		// variants of observed state
		if j, ok := st.Observed.Resources["job"]; ok {
			for i, status := range []map[string]any{
				{"ready": float64(1), "active": float64(1)},
				{"succeeded": float64(4), "conditions": []any{map[string]any{"type": "Complete", "status": "True"}}},
				{"failed": float64(2), "conditions": []any{map[string]any{"type": "Failed", "status": "True"}}},
				{"failed": float64(2), "conditions": []any{map[string]any{"type": "Failed", "status": "False"}}},
				{},
				{"ready": "bad"},
			} {
				r := proto.Clone(st).(*fnv1.RunFunctionRequest)
				jj := proto.Clone(j).(*fnv1.Resource)
				setField(t, jj, status, "status")
				r.Observed.Resources["job"] = jj
				write(ex+".job"+strconv.Itoa(i), snapRun(t, r))
			}
			// malformed spec in the observed job
			r := proto.Clone(st).(*fnv1.RunFunctionRequest)
			jj := proto.Clone(j).(*fnv1.Resource)
			setField(t, jj, "notanumber", "spec", "parallelism")
			r.Observed.Resources["job"] = jj
			write(ex+".jobbadspec", snapRun(t, r))
		}
		if s, ok := st.Observed.Resources["lead-broker"]; ok {
			r := proto.Clone(st).(*fnv1.RunFunctionRequest)
			ss := proto.Clone(s).(*fnv1.Resource)
			setField(t, ss, []any{map[string]any{"name": "flux-broker", "port": float64(8050), "nodePort": float64(30093), "targetPort": float64(8050)}}, "spec", "ports")
			r.Observed.Resources["lead-broker"] = ss
			write(ex+".nodeport", snapRun(t, r))
		}
		if p, ok := st.Observed.Resources["services-pod"]; ok {
			for i, status := range []map[string]any{
				{"phase": "Running", "conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
				{"phase": "Succeeded"},
				{"phase": "Pending"},
			} {
				r := proto.Clone(st).(*fnv1.RunFunctionRequest)
				pp := proto.Clone(p).(*fnv1.Resource)
				setField(t, pp, status, "status")
				r.Observed.Resources["services-pod"] = pp
				write(ex+".pod"+strconv.Itoa(i), snapRun(t, r))
			}
		}
		if s, ok := st.Observed.Resources["curve-cert"]; ok {
			for i, v := range []any{base64.StdEncoding.EncodeToString([]byte("garbage")), "!!!", float64(3)} {
				r := proto.Clone(st).(*fnv1.RunFunctionRequest)
				ss := proto.Clone(s).(*fnv1.Resource)
				setField(t, ss, v, "data", "curve.cert")
				r.Observed.Resources["curve-cert"] = ss
				write(ex+".cert"+strconv.Itoa(i), snapRun(t, r))
			}
		}
		// cleanup & finished phase
		r := proto.Clone(st).(*fnv1.RunFunctionRequest)
		oxr := r.Observed.Composite
		setField(t, oxr, true, "spec", "cleanup")
		setField(t, oxr, "Succeeded", "status", "phase")
		write(ex+".cleanup", snapRun(t, r))
		// clamp
		r = proto.Clone(st).(*fnv1.RunFunctionRequest)
		setField(t, r.Observed.Composite, float64(100), "spec", "size")
		write(ex+".clamp", snapRun(t, r))
	}
	for _, size := range []int{1, 4, 64, 1000, 10000} {
		write("size"+strconv.Itoa(size)+".first", snapRun(t, firstRequest(t, sizedXR(t, size))))
		write("size"+strconv.Itoa(size)+".steady", snapRun(t, steadyRequest(t, sizedXR(t, size))))
	}
	// fatal cases
	for i, spec := range []map[string]any{
		{"size": float64(0), "containers": []any{map[string]any{"image": "x"}}},
		{"size": "four", "containers": []any{map[string]any{"image": "x"}}},
		{"size": float64(1), "containers": []any{map[string]any{"image": "x", "command": "echo \"hi"}}},
		{"size": float64(1), "flux": map[string]any{"curveCert": "junk"}, "containers": []any{map[string]any{"image": "x"}}},
	} {
		write("fatal"+strconv.Itoa(i), snapRun(t, firstRequest(t, composite("flux-sample", "default", spec))))
	}
}
