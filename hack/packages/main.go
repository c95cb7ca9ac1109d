// Command packages builds the Function, Provider and Configuration .xpkg
// files without a Docker engine: each runtime image is assembled in Go
// (go-containerregistry: the static binary on a distroless-like base with a
// CA bundle and the nonroot user, see image.go) and embedded
// with `crossplane xpkg build --embed-runtime-image-tarball`. `make
// packages` calls it.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"k8s.io/apimachinery/pkg/util/yaml"
)

type pkg struct {
	name     string   // package (and image) name
	meta     string   // crossplane.yaml
	files    []string // globs copied into the package root
	binary   string   // runtime binary; empty for a Configuration
	port     string   // exposed port of the runtime
	examples string   // examples root, if any
	// function, for a Configuration, is the Function its Compositions call
	// (functionRef.name in compositions/) and that it depends on as
	// ${REGISTRY}/<function>: the packaged Compositions call it by the name
	// Crossplane gives the dependency it installs (see functionName).
	function string
}

// packages are the four packages: the Function and the Provider carry a
// runtime image of their binary (see image.go), the Configurations the XRD
// and Composition of each shape (claims, and Crossplane v2's namespaced
// composite; a cluster installs one of them).
var packages = []pkg{
	{name: "function-minicluster", meta: "package/function/crossplane.yaml", files: []string{"package/input/*.yaml"}, binary: "function", port: "9443/tcp"},
	{name: "provider-minicluster-burst", meta: "package/provider/crossplane.yaml", files: []string{"package/provider/crds/*.yaml"}, binary: "provider", port: "8080/tcp"},
	{name: "configuration-minicluster", meta: "package/configuration/crossplane.yaml", files: []string{"compositions/definition.yaml", "compositions/composition.yaml"}, examples: "examples", function: "function-minicluster"},
	{name: "configuration-minicluster-v2", meta: "package/configuration-v2/crossplane.yaml", files: []string{"compositions/v2/definition.yaml", "compositions/v2/composition.yaml"}, examples: "examples", function: "function-minicluster"},
}

func main() {
	var (
		crossplane = flag.String("crossplane", "", "crossplane CLI")
		bin        = flag.String("bin", "bin", "directory of the static binaries, one subdirectory <os>_<arch> a platform")
		platforms  = flag.String("platforms", "linux/amd64,linux/arm64", "platforms of the runtime images: one .xpkg each, pushed together as one multi-platform package")
		out        = flag.String("out", "_output/packages", "where to write the .xpkg files")
		version    = flag.String("version", "v0.1.0", "package version")
		registry   = flag.String("registry", "xpkg.crossplane.io/flux-framework", "registry and organisation the packages are pushed to (the Configuration depends on the Function there)")
		caBundle   = flag.String("ca-bundle", "/etc/ssl/certs/ca-certificates.crt", "CA bundle the runtime images carry (Debian's ca-certificates)")
		only       = flag.String("packages", "", "comma-separated names of the packages to build (default: all)")
	)
	flag.Parse()
	vars := map[string]string{"${REGISTRY}": *registry, "${VERSION}": *version}
	selected, err := selectPackages(*only)
	if err != nil {
		fmt.Fprintf(os.Stderr, "packages: %v\n", err)
		os.Exit(2)
	}
	for _, p := range selected {
		plats := []string{""} // a Configuration has no runtime
		if p.binary != "" {
			plats = strings.Split(*platforms, ",")
		}
		for _, plat := range plats {
			start := time.Now()
			path, err := build(p, plat, *crossplane, *bin, *out, *caBundle, vars)
			if err != nil {
				fmt.Fprintf(os.Stderr, "packages: %s %s: %v\n", p.name, plat, err)
				os.Exit(1)
			}
			fmt.Fprintf(os.Stderr, "packages: built %s (%s)\n", path, time.Since(start).Round(time.Millisecond))
		}
	}
}

// selectPackages returns the packages named in a comma-separated list, in
// the order of packages; all of them for an empty list.
func selectPackages(list string) ([]pkg, error) {
	if list == "" {
		return packages, nil
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		want[strings.TrimSpace(n)] = true
	}
	var out []pkg
	for _, p := range packages {
		if want[p.name] {
			out = append(out, p)
			delete(want, p.name)
		}
	}
	if len(want) > 0 {
		unknown := make([]string, 0, len(want))
		for n := range want {
			unknown = append(unknown, n)
		}
		slices.Sort(unknown)
		names := make([]string, 0, len(packages))
		for _, p := range packages {
			names = append(names, p.name)
		}
		return nil, fmt.Errorf("no package %s (have %s)", strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	return out, nil
}

// build writes one .xpkg of p: <name>.xpkg for a Configuration,
// <name>-<arch>.xpkg with the runtime image of platform plat ("linux/arm64")
// for a Function or Provider.
func build(p pkg, plat, crossplane, bin, out, caBundle string, vars map[string]string) (string, error) {
	stage, err := os.MkdirTemp("", "xpkg-"+p.name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(stage) //nolint:errcheck // a temporary directory
	root := filepath.Join(stage, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	meta, err := os.ReadFile(p.meta)
	if err != nil {
		return "", err
	}
	text := string(meta)
	for k, v := range vars {
		text = strings.ReplaceAll(text, k, v)
	}
	var fnName string
	if p.function != "" {
		if fnName, err = functionName(vars["${REGISTRY}"] + "/" + p.function); err != nil {
			return "", err
		}
	}
	if err := os.WriteFile(filepath.Join(root, "crossplane.yaml"), []byte(text), 0o644); err != nil {
		return "", err
	}
	for _, g := range p.files {
		matches, err := filepath.Glob(g)
		if err != nil || len(matches) == 0 {
			return "", fmt.Errorf("no files match %s (run make generate)", g)
		}
		for _, m := range matches {
			if err := copyFile(m, filepath.Join(root, filepath.Base(m))); err != nil {
				return "", err
			}
			if fnName == "" {
				continue
			}
			if err := renameFunctionRefs(filepath.Join(root, filepath.Base(m)), p.function, fnName); err != nil {
				return "", err
			}
		}
	}

	args := []string{"xpkg", "build", "--package-root=" + root}
	examples := filepath.Join(stage, "examples")
	if p.examples != "" {
		// Only the claims: the render inputs next to them are not examples
		// of the package's API.
		claims, _ := filepath.Glob(filepath.Join(p.examples, "*", "claim.yaml"))
		for _, c := range claims {
			if err := copyFile(c, filepath.Join(examples, filepath.Base(filepath.Dir(c))+".yaml")); err != nil {
				return "", err
			}
		}
	}
	args = append(args, "--examples-root="+examples)
	fileName := p.name + ".xpkg"
	if p.binary != "" {
		goos, arch, ok := strings.Cut(plat, "/")
		if !ok || goos != "linux" {
			return "", fmt.Errorf("platform %q: want linux/<arch>", plat)
		}
		image := filepath.Join(stage, "image.tar")
		if err := writeImage(filepath.Join(bin, goos+"_"+arch, p.binary), p.binary, p.port, p.name, arch, caBundle, image); err != nil {
			return "", fmt.Errorf("cannot build runtime image: %w", err)
		}
		args = append(args, "--embed-runtime-image-tarball="+image)
		fileName = p.name + "-" + arch + ".xpkg"
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", err
	}
	file, err := filepath.Abs(filepath.Join(out, fileName))
	if err != nil {
		return "", err
	}
	args = append(args, "--package-file="+file)
	cmd := exec.Command(crossplane, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("crossplane xpkg build: %w", err)
	}
	return file, nil
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// functionName is the name Crossplane gives a Function it installs as a
// dependency of a Configuration: the package's repository path (without
// registry and tag) as a DNS label — "flux-framework-function-minicluster"
// for xpkg.crossplane.io/flux-framework/function-minicluster. Crossplane's
// resolver parses the dependency with name.ParseReference and names the
// package xpkg.ToDNSLabel(ref.Context().RepositoryStr())
// (internal/controller/pkg/resolver NewPackage, crossplane v2.4).
func functionName(pkgRef string) (string, error) {
	ref, err := name.ParseReference(pkgRef)
	if err != nil {
		return "", fmt.Errorf("dependency %s: %w", pkgRef, err)
	}
	n := toDNSLabel(ref.Context().RepositoryStr())
	if n == "" {
		return "", fmt.Errorf("dependency %s: no DNS label in its repository path", pkgRef)
	}
	return n, nil
}

// toDNSLabel is crossplane-runtime's xpkg.ToDNSLabel (v2.4), copied to keep
// this command's dependencies small: lower-case letters and digits are
// kept, '.', '/', ':' and '-' become '-' (except first and last), anything
// else is dropped, at most 63 characters, no leading or trailing '-'.
func toDNSLabel(s string) string {
	var cut strings.Builder
	for i := range s {
		b := s[i]
		if ('a' <= b && b <= 'z') || ('0' <= b && b <= '9') {
			cut.WriteByte(b)
		}
		if (b == '.' || b == '/' || b == ':' || b == '-') && (i != 0 && i != 62 && i != len(s)-1) {
			cut.WriteByte('-')
		}
		if i == 62 {
			break
		}
	}
	return strings.Trim(cut.String(), "-")
}

// functionRefRE matches the name of a Composition pipeline step's
// functionRef: "functionRef:" and, on the next line, "name: <function>".
var functionRefRE = regexp.MustCompile(`(?m)^(\s*(?:-\s+)?functionRef:\s*\n\s*name:\s*)(\S+)(\s*(?:#.*)?)$`)

// renameFunctionRefs rewrites, in a packaged copy of a compositions/ file,
// every pipeline step's functionRef.name from old to new (keeping the
// file's comments), and checks the result: every Composition's steps call
// new. Files without Compositions are unchanged.
func renameFunctionRefs(path, old, new string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	out := functionRefRE.ReplaceAllStringFunc(string(b), func(m string) string {
		sub := functionRefRE.FindStringSubmatch(m)
		if strings.Trim(sub[2], `"'`) != old {
			return m
		}
		return sub[1] + new + sub[3]
	})
	if err := checkFunctionRefs(out, new); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, []byte(out), 0o644)
}

// checkFunctionRefs decodes every YAML document and checks each Composition
// pipeline step calls new.
func checkFunctionRefs(text, new string) error {
	dec := yaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
	for {
		var doc struct {
			Kind string `json:"kind"`
			Spec struct {
				Pipeline []struct {
					Step        string `json:"step"`
					FunctionRef struct {
						Name string `json:"name"`
					} `json:"functionRef"`
				} `json:"pipeline"`
			} `json:"spec"`
		}
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if doc.Kind != "Composition" {
			continue
		}
		for _, s := range doc.Spec.Pipeline {
			if n := s.FunctionRef.Name; n != new {
				return fmt.Errorf("pipeline step %q calls function %q, want %q (the name Crossplane gives the dependency)", s.Step, n, new)
			}
		}
	}
}
