package function

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

func TestChooseView(t *testing.T) {
	const (
		noble = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"
		rocky = "ghcr.io/converged-computing/flux-view-rocky:tag-9"
	)
	type want struct {
		view string
		// warning has these words, "" for no warning.
		warning []string
	}
	cases := map[string]struct {
		reason     string
		containers []v1alpha2.MiniClusterContainer
		view       string
		disable    bool
		defaults   v1beta1.Defaults
		want       want
	}{
		"PickedForImage": {
			reason:     "A claim without a view gets the view of its runner's image.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			want:       want{view: rocky},
		},
		"UnknownImageKeepsDefault": {
			reason:     "An image the table does not know keeps the default view.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "ghcr.io/rse-ops/accounting:app-latest"}},
			want:       want{view: noble},
		},
		"UnknownImagePlatformDefault": {
			reason:     "An image the table does not know gets the platform's fluxViewImage.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "localhost/app:bookworm"}},
			defaults:   v1beta1.Defaults{FluxViewImage: "registry.example.com/view:1"},
			want:       want{view: "registry.example.com/view:1"},
		},
		"PlatformDefaultBeforeBuiltins": {
			reason:     "A platform that sets fluxViewImage chose its views: the built-in table does not pick.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			defaults:   v1beta1.Defaults{FluxViewImage: "registry.example.com/view:1"},
			want:       want{view: "registry.example.com/view:1"},
		},
		"PlatformDefaultAndBuiltins": {
			reason:     "builtinFluxViews: true keeps the built-in table beside fluxViewImage (the view for the images it does not know).",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			defaults:   v1beta1.Defaults{FluxViewImage: "registry.example.com/view:1", BuiltinFluxViews: ptr.To(true)},
			want:       want{view: rocky},
		},
		"PlatformTableBeforePlatformDefault": {
			reason:     "The platform's own entries pick before its fluxViewImage.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9.5"}},
			defaults: v1beta1.Defaults{FluxViewImage: "registry.example.com/view:1",
				FluxViews: []v1beta1.FluxView{{Image: "rockylinux:9", View: "registry.example.com/rocky:9"}}},
			want: want{view: "registry.example.com/rocky:9"},
		},
		"RunnerImageCounts": {
			reason: "The view runs in the Flux runner's container, not a sidecar's.",
			containers: []v1alpha2.MiniClusterContainer{
				{Name: "web", Image: "ubuntu:noble"},
				{Name: "app", Image: "almalinux:9", RunFlux: true},
			},
			want: want{view: rocky},
		},
		"ClaimViewKept": {
			reason:     "The view a claim names is kept, and it fits.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			view:       rocky,
			want:       want{view: rocky},
		},
		"ClaimViewKnownMismatch": {
			reason:     "A view the table gives to another OS than the runner's: kept, with a warning naming both and the fix.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			view:       noble,
			want: want{view: noble, warning: []string{"spec.flux.container.image " + noble, "spec.containers[0].image rockylinux:9",
				"set spec.flux.container.image to " + rocky, "or remove it"}},
		},
		"ClaimViewUnknown": {
			reason:     "A view the table does not know (a platform's own build) is not judged.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			view:       "registry.example.com/my-view:9",
			want:       want{view: "registry.example.com/my-view:9"},
		},
		"ClaimViewSameImageOtherSpelling": {
			reason:     "The same view, spelled with a digest, fits.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "ubuntu:24.04"}},
			view:       noble + "@sha256:" + strings.Repeat("a", 64),
			want:       want{view: noble + "@sha256:" + strings.Repeat("a", 64)},
		},
		"Disabled": {
			reason:     "Without a view, nothing is picked or judged.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			view:       "ubuntu:focal",
			disable:    true,
			want:       want{view: "ubuntu:focal"},
		},
		"PlatformTableOnly": {
			reason:     "builtinFluxViews: false: the built-in table does not pick.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			defaults:   v1beta1.Defaults{BuiltinFluxViews: ptr.To(false)},
			want:       want{view: noble},
		},
		"WarnsWhateverPicks": {
			reason:     "What the built-in table knows still tells a mismatch when it does not pick.",
			containers: []v1alpha2.MiniClusterContainer{{Image: "rockylinux:9"}},
			view:       noble,
			defaults:   v1beta1.Defaults{FluxViewImage: "registry.example.com/view:1"},
			want:       want{view: noble, warning: []string{"set spec.flux.container.image to " + rocky}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			mc := &v1alpha2.MiniCluster{Spec: v1alpha2.MiniClusterSpec{Containers: tc.containers}}
			mc.Name = "flux-sample"
			mc.Spec.Flux.Container.Image = tc.view
			mc.Spec.Flux.Container.Disable = tc.disable
			v1alpha2.SetDefaults(mc, tc.defaults.PlatformDefaults())
			w := chooseView(mc, tc.view, tc.defaults)
			got := want{view: mc.Spec.Flux.Container.Image}
			for _, words := range tc.want.warning {
				if strings.Contains(w, words) {
					got.warning = append(got.warning, words)
				}
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("%s\n-want, +got:\n%s\nwarning: %q", tc.reason, diff, w)
			}
			if len(tc.want.warning) == 0 && w != "" {
				t.Errorf("%s\nunexpected warning %q", tc.reason, w)
			}
		})
	}
}
