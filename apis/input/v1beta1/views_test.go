package v1beta1

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func TestViewFor(t *testing.T) {
	type want struct {
		view string
		ok   bool
	}
	cases := map[string]struct {
		reason   string
		defaults Defaults
		image    string
		want     want
	}{
		"Rocky9": {
			reason: "rockylinux:9 gets the Rocky 9 view.",
			image:  "rockylinux:9",
			want:   want{view: "ghcr.io/converged-computing/flux-view-rocky:tag-9", ok: true},
		},
		"LongerTag": {
			reason: "A point release or variant of a tag is that tag.",
			image:  "rockylinux:9.3-minimal",
			want:   want{view: "ghcr.io/converged-computing/flux-view-rocky:tag-9", ok: true},
		},
		"NotAPrefixOfANumber": {
			reason: "rockylinux:90 is not rockylinux:9.",
			image:  "rockylinux:90",
			want:   want{},
		},
		"DockerHubSpelledOut": {
			reason: "docker.io/library/ is the same repository as none.",
			image:  "docker.io/library/ubuntu:noble",
			want:   want{view: "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble", ok: true},
		},
		"Mirror": {
			reason: "Without a host in the table, a mirror's image of the same repository matches.",
			image:  "mirror.example.com:5000/ubuntu:jammy",
			want:   want{view: "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy", ok: true},
		},
		"Digest": {
			reason: "A digest is ignored.",
			image:  "almalinux:8@sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
			want:   want{view: "ghcr.io/converged-computing/flux-view-rocky:tag-8", ok: true},
		},
		"OtherRepository": {
			reason: "An image of another user's repository of the same name is not the OS image.",
			image:  "someone/ubuntu:noble",
			want:   want{},
		},
		"Untagged": {
			reason: "An image without a tag (latest) has no known release.",
			image:  "ubuntu",
			want:   want{},
		},
		"Unknown": {
			reason: "An application image the table does not know gets no view from it.",
			image:  "ghcr.io/rse-ops/lammps:flux-sched-focal",
			want:   want{},
		},
		"PlatformOverrides": {
			reason:   "A platform's entry comes before the built-in one for the same image.",
			defaults: Defaults{FluxViews: []FluxView{{Image: "rockylinux:9", View: "registry.example.com/views/rocky:9"}}},
			image:    "rockylinux:9.4",
			want:     want{view: "registry.example.com/views/rocky:9", ok: true},
		},
		"PlatformExtends": {
			reason:   "A platform's entry for its own base image, any tag.",
			defaults: Defaults{FluxViews: []FluxView{{Image: "registry.example.com/hpc/base", View: "registry.example.com/views/rocky:9"}}},
			image:    "registry.example.com/hpc/base:2025.1",
			want:     want{view: "registry.example.com/views/rocky:9", ok: true},
		},
		"PlatformHostMatters": {
			reason:   "An entry with a registry host matches only images of that registry.",
			defaults: Defaults{FluxViews: []FluxView{{Image: "registry.example.com/hpc/base", View: "registry.example.com/views/rocky:9"}}},
			image:    "other.example.com/hpc/base:2025.1",
			want:     want{},
		},
		"PlatformDefaultTurnsBuiltinsOff": {
			reason:   "A platform that sets fluxViewImage chose its views.",
			defaults: Defaults{FluxViewImage: "registry.example.com/view:1"},
			image:    "rockylinux:9",
			want:     want{},
		},
		"BuiltinsOn": {
			reason:   "builtinFluxViews: true keeps the built-in table beside fluxViewImage.",
			defaults: Defaults{FluxViewImage: "registry.example.com/view:1", BuiltinFluxViews: ptr.To(true)},
			image:    "rockylinux:9",
			want:     want{view: "ghcr.io/converged-computing/flux-view-rocky:tag-9", ok: true},
		},
		"BuiltinsOff": {
			reason:   "builtinFluxViews: false leaves only the platform's entries.",
			defaults: Defaults{BuiltinFluxViews: ptr.To(false)},
			image:    "rockylinux:9",
			want:     want{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v, ok := ViewFor(tc.defaults.ViewTable(), tc.image)
			if diff := cmp.Diff(tc.want, want{view: v.View, ok: ok}, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\nViewFor(%q): -want, +got:\n%s", tc.reason, tc.image, diff)
			}
		})
	}
}

func TestValidateFluxViews(t *testing.T) {
	cases := map[string]struct {
		reason string
		views  []FluxView
		want   []string
	}{
		"Valid": {
			reason: "An image pattern and a view.",
			views:  []FluxView{{Image: "rockylinux:9", View: "v"}},
		},
		"Empty": {
			reason: "An entry with neither matches nothing and names no view.",
			views:  []FluxView{{}},
			want:   []string{"defaults.fluxViews[0].image", "defaults.fluxViews[0].view"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, e := range (Defaults{FluxViews: tc.views}).ValidateFluxViews() {
				got = append(got, e.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDefaultFluxViewsMatch: every built-in entry matches its own image
// and is the first to do so (no entry hides another).
func TestDefaultFluxViewsMatch(t *testing.T) {
	for i, v := range DefaultFluxViews {
		got, ok := ViewFor(DefaultFluxViews, v.Image)
		if !ok || got != v {
			t.Errorf("DefaultFluxViews[%d] %v: the first match of its own image is %v (%t)", i, v, got, ok)
		}
	}
}
