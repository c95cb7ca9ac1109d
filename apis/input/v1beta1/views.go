package v1beta1

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// FluxView names the Flux view for the application images Image matches.
type FluxView struct {
	// Image matches application images by repository and, when it has
	// one, tag. A tag matches itself and its longer forms: "rockylinux:9"
	// matches rockylinux:9, rockylinux:9.3 and rockylinux:9-minimal, not
	// rockylinux:90; "rockylinux" matches every tag. A registry host is
	// optional: without one, Image matches the repository in any registry
	// (docker.io/library/ubuntu:noble and mirror.example.com/ubuntu:noble
	// for "ubuntu:noble"); with one, only there. Digests are ignored.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`

	// View is the Flux view image those application images get.
	// +kubebuilder:validation:MinLength=1
	View string `json:"view"`
}

// Views of converged-computing/flux-views, the Flux Operator's.
const (
	viewRocky8 = "ghcr.io/converged-computing/flux-view-rocky:tag-8"
	viewRocky9 = "ghcr.io/converged-computing/flux-view-rocky:tag-9"
	viewFocal  = "ghcr.io/converged-computing/flux-view-ubuntu:tag-focal"
	viewJammy  = "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy"
	viewNoble  = "ghcr.io/converged-computing/flux-view-ubuntu:tag-noble"
)

// DefaultFluxViews is the built-in view table: the Flux Operator's views for
// the base images they were built on, and for the images that share their C
// library. Enterprise Linux rebuilds take the Rocky view of their major
// release. Debian, for which there is no view, takes the newest Ubuntu view
// whose glibc and libstdc++ are not newer than its own (bullseye 2.31 as
// focal, bookworm 2.36 over jammy's 2.35, trixie 2.41 over noble's 2.39):
// a binary runs on a C library at least as new as the one it was built on.
var DefaultFluxViews = []FluxView{
	{Image: "rockylinux:8", View: viewRocky8},
	{Image: "rockylinux:9", View: viewRocky9},
	{Image: "rockylinux/rockylinux:8", View: viewRocky8}, // quay.io's official name
	{Image: "rockylinux/rockylinux:9", View: viewRocky9},
	{Image: "almalinux:8", View: viewRocky8},
	{Image: "almalinux:9", View: viewRocky9},
	{Image: "oraclelinux:8", View: viewRocky8},
	{Image: "oraclelinux:9", View: viewRocky9},
	{Image: "ubuntu:focal", View: viewFocal},
	{Image: "ubuntu:20.04", View: viewFocal},
	{Image: "ubuntu:jammy", View: viewJammy},
	{Image: "ubuntu:22.04", View: viewJammy},
	{Image: "ubuntu:noble", View: viewNoble},
	{Image: "ubuntu:24.04", View: viewNoble},
	{Image: "debian:bullseye", View: viewFocal},
	{Image: "debian:11", View: viewFocal},
	{Image: "debian:bookworm", View: viewJammy},
	{Image: "debian:12", View: viewJammy},
	{Image: "debian:trixie", View: viewNoble},
	{Image: "debian:13", View: viewNoble},
}

// ViewTable is the table that picks views for these defaults: fluxViews,
// then the built-in table when builtinFluxViews says so (by default, when
// fluxViewImage is not set).
func (d Defaults) ViewTable() []FluxView {
	out := append([]FluxView(nil), d.FluxViews...)
	builtin := d.FluxViewImage == ""
	if d.BuiltinFluxViews != nil {
		builtin = *d.BuiltinFluxViews
	}
	if builtin {
		out = append(out, DefaultFluxViews...)
	}
	return out
}

// KnownViews is everything these defaults know about which view is built
// for which images, whichever picks: fluxViews, then the built-in table.
func (d Defaults) KnownViews() []FluxView {
	return append(append([]FluxView(nil), d.FluxViews...), DefaultFluxViews...)
}

// ValidateFluxViews reports the entries of fluxViews that cannot match or
// name no view.
func (d Defaults) ValidateFluxViews() field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("defaults", "fluxViews")
	for i, v := range d.FluxViews {
		if r := parseImage(v.Image); r.path == "" {
			errs = append(errs, field.Invalid(p.Index(i).Child("image"), v.Image, "must name an image repository, with an optional registry host and tag, such as rockylinux:9"))
		}
		if strings.TrimSpace(v.View) == "" {
			errs = append(errs, field.Required(p.Index(i).Child("view"), "the Flux view image for "+v.Image))
		}
	}
	return errs
}

// ViewFor is the first entry of table that matches the application image,
// if any.
func ViewFor(table []FluxView, image string) (FluxView, bool) {
	img := parseImage(image)
	for _, v := range table {
		if parseImage(v.Image).matches(img) {
			return v, true
		}
	}
	return FluxView{}, false
}

// KnownView tells whether view is one the table gives to some image, so
// that what it was built for is known.
func KnownView(table []FluxView, view string) bool {
	for _, v := range table {
		if SameImage(v.View, view) {
			return true
		}
	}
	return false
}

// SameImage tells whether a and b name the same repository and tag, in the
// same registry (Docker Hub however it is spelled), digests aside.
func SameImage(a, b string) bool {
	return parseImage(a) == parseImage(b)
}

// imageRef is an image reference without its digest.
type imageRef struct {
	// host is the registry, "" for Docker Hub (or none given).
	host, path, tag string
}

// dockerHub are the names of the registry a reference without a host means.
var dockerHub = map[string]bool{"docker.io": true, "index.docker.io": true, "registry-1.docker.io": true}

func parseImage(ref string) imageRef {
	ref = strings.TrimSpace(ref)
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	var r imageRef
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, r.tag = ref[:i], ref[i+1:]
	}
	// As Docker reads a reference: the first component is a registry when
	// it has a dot or a port, or is localhost.
	if first, rest, ok := strings.Cut(ref, "/"); ok && (strings.ContainsAny(first, ".:") || first == "localhost") {
		r.host, ref = first, rest
	}
	if dockerHub[r.host] {
		r.host = ""
	}
	if r.host == "" {
		ref = strings.TrimPrefix(ref, "library/")
	}
	r.path = ref
	return r
}

// matches tells whether the pattern p (a table entry's image) matches the
// application image img.
func (p imageRef) matches(img imageRef) bool {
	if p.path == "" || p.path != img.path || (p.host != "" && p.host != img.host) {
		return false
	}
	if p.tag == "" || p.tag == img.tag {
		return true
	}
	rest, ok := strings.CutPrefix(img.tag, p.tag)
	return ok && (strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "-"))
}
