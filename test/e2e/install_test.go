package e2e_test

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// Tools the install test needs beyond the control plane's, found like
// FindTools finds those: an environment variable, else hack/tools.sh path.
const (
	envCrossplaneCLI = "MC_CROSSPLANE" // the crossplane CLI (xpkg build, xpkg push), as for the render tests
	envCrane         = "MC_CRANE"      // crane (registry serve, export, config)
)

const packageVersion = "v0.1.0"

// TestInstallFromPackages installs MiniClusters the way the README tells a
// platform team to, from the project's packages, into a fresh control
// plane that has none of the harness's own installation: the .xpkg files
// are built (make packages), pushed to a registry on loopback with
// `crossplane xpkg push` (make publish), and installed with a
// Configuration and a Provider. Crossplane pulls them, resolves the
// Configuration's dependency and installs the Function; the test then
// plays the External package runtime with the binaries from the pushed
// packages, and a hello-world MiniCluster composes its cluster. It does so
// for each shape's Configuration (configuration-minicluster with claims,
// configuration-minicluster-v2 where the MiniCluster is the composite),
// each on a fresh control plane of its own (the shapes share the
// MiniCluster CRD, so one cluster runs one of them); the packages are
// built and pushed once for both.
func TestInstallFromPackages(t *testing.T) {
	requireE2E(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the External runtime here runs the linux/amd64 image's binary; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	begin := time.Now()
	repo, cli, crane, work, registry := packageRegistry(t)

	// Not a step: -run TestInstallFromPackages/V2 must build them too.
	start := time.Now()
	out := buildPackages(t, repo, cli, filepath.Join(work, packageVersion), packageVersion, registry, allPackages)
	t.Logf("built the packages in %s", time.Since(start).Round(100*time.Millisecond))
	start = time.Now()
	pushPackages(t, repo, cli, out, packageVersion, registry, allPackages)
	t.Logf("pushed the packages in %s", time.Since(start).Round(100*time.Millisecond))
	for _, p := range []string{"function-minicluster", "provider-minicluster-burst"} {
		if got := platforms(t, crane, registry+"/"+p+":"+packageVersion); !slices.Equal(got, []string{"linux/amd64", "linux/arm64"}) {
			t.Errorf("%s is published for %v, want linux/amd64 and linux/arm64", p, got)
		}
	}
	// The runtime binaries, as the packages ship them: the External
	// runtime below runs these, not a fresh build.
	pkgs := installedPackages{
		registry: registry,
		function: runtimeBinary(t, crane, registry+"/function-minicluster:"+packageVersion, "function", work),
		provider: runtimeBinary(t, crane, registry+"/provider-minicluster-burst:"+packageVersion, "provider", work),
	}

	cases := map[string]struct {
		reason        string
		shape         driver.Shape
		configuration string // the Configuration package
		xrd           string // the XRD it installs
	}{
		"Claims": {
			reason:        "The claim shape: a namespaced claim and a cluster-scoped composite; the XRD is Established and Offered.",
			shape:         driver.ShapeClaims,
			configuration: "configuration-minicluster",
			xrd:           harness.XRDName,
		},
		"V2": {
			reason:        "The Crossplane v2 shape: the namespaced MiniCluster is the composite; the XRD has no claim, so it is Established, never Offered.",
			shape:         driver.ShapeV2,
			configuration: "configuration-minicluster-v2",
			xrd:           harness.XRDNameV2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Log(tc.reason)
			testInstallFromPackages(t, pkgs, tc.shape, tc.configuration, tc.xrd)
		})
	}
	t.Logf("TestInstallFromPackages took %s", time.Since(begin).Round(100*time.Millisecond))
}

// installedPackages are the packages TestInstallFromPackages pushed: the
// registry they are in and the runtime binaries their images carry.
type installedPackages struct {
	registry, function, provider string
}

// testInstallFromPackages installs a shape's Configuration and the Provider
// from pkgs on a control plane of its own and checks a hello-world
// MiniCluster composes.
func testInstallFromPackages(t *testing.T, pkgs installedPackages, shape driver.Shape, configuration, xrd string) {
	registry := pkgs.registry
	cp := startOwnControlPlane(t, harness.Options{
		Name: "install-" + string(shape), Shape: shape, SkipInstall: true, SkipFunctionRegistration: true, FunctionBinary: pkgs.function,
	})

	step(t, "install the Configuration and the Provider", func(t *testing.T) {
		// README "Install on a cluster", step 1.
		if err := cp.ApplyFile(ctx(t), "compositions/rbac.yaml"); err != nil {
			t.Fatal(err)
		}
		for kind, pkg := range map[string]string{
			"Configuration": configuration,
			"Provider":      "provider-minicluster-burst",
		} {
			u := pkgObject(kind, pkg)
			if err := unstructured.SetNestedField(u.Object, registry+"/"+pkg+":"+packageVersion, "spec", "package"); err != nil {
				t.Fatal(err)
			}
			if err := cp.Client.Create(ctx(t), u); err != nil {
				t.Fatal(err)
			}
		}
	})

	var fn string
	step(t, "Crossplane resolves the dependency and installs the Function", func(t *testing.T) {
		eventually(t, 3*time.Minute, "a Function for "+registry+"/function-minicluster exists", func() error {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("pkg.crossplane.io/v1")
			l.SetKind("FunctionList")
			if err := cp.Client.List(ctx(t), l); err != nil {
				return err
			}
			for _, f := range l.Items {
				if p, _, _ := unstructured.NestedString(f.Object, "spec", "package"); strings.HasPrefix(p, registry+"/function-minicluster:") {
					fn = f.GetName()
					t.Logf("Function %s, package %s", fn, p)
					return nil
				}
			}
			cfg := pkgObject("Configuration", configuration)
			_ = cp.Client.Get(ctx(t), client.ObjectKeyFromObject(cfg), cfg)
			return fmt.Errorf("no Function yet; Configuration: %s", conditions(cfg))
		})
		// The Configuration's Composition must call the Function by the
		// name the package manager gave it.
		eventually(t, 2*time.Minute, "the Composition's pipeline names Function "+fn, func() error {
			comp := &unstructured.Unstructured{}
			comp.SetAPIVersion("apiextensions.crossplane.io/v1")
			comp.SetKind("Composition")
			if err := cp.Client.Get(ctx(t), client.ObjectKey{Name: harness.CompositionName}, comp); err != nil {
				return err
			}
			steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
			var refs []string
			for _, s := range steps {
				name, _, _ := unstructured.NestedString(s.(map[string]any), "functionRef", "name")
				refs = append(refs, name)
			}
			if !slices.Equal(refs, []string{fn}) {
				t.Fatalf("the Composition's pipeline calls %v, but Crossplane installed the dependency as Function %q: no claim can compose", refs, fn)
			}
			return nil
		})
	})

	step(t, "the External runtime serves the Function's revision", func(t *testing.T) {
		// The package manager has done its part; the package waits for
		// its runtime: the revision cannot establish the Input CRD without
		// the runtime's TLS Secret, and the Function is not Healthy.
		var rev string
		eventually(t, 2*time.Minute, "Function "+fn+" has an active revision waiting for its runtime", func() error {
			r, err := activeRevision(t, cp, "FunctionRevision", fn)
			if err != nil {
				return err
			}
			if st, _ := condition(r, "RevisionHealthy"); st == "" {
				return fmt.Errorf("%s: no RevisionHealthy condition yet", r.GetName())
			}
			rev = r.GetName()
			t.Logf("FunctionRevision %s: %s", rev, conditions(r))
			return nil
		})
		f := pkgObject("Function", fn)
		if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(f), f); err != nil {
			t.Fatal(err)
		}
		if st, msg := condition(f, "Healthy"); st == "True" {
			t.Errorf("Function %s is Healthy before any runtime serves it (%s)", fn, msg)
		}
		if err := cp.ServeFunctionRevision(ctx(t), rev); err != nil {
			t.Fatal(err)
		}
		t.Logf("FunctionRevision %s: endpoint %s (the function from the package, pid %d)", rev, cp.FunctionAddress, cp.FunctionPid())
		eventually(t, 2*time.Minute, "FunctionRevision "+rev+" is RevisionHealthy with the composition capability", func() error {
			r, err := activeRevision(t, cp, "FunctionRevision", fn)
			if err != nil {
				return err
			}
			if err := wantCondition(r, "RevisionHealthy", "True"); err != nil {
				return err
			}
			caps, _, _ := unstructured.NestedStringSlice(r.Object, "status", "capabilities")
			if !slices.Contains(caps, "composition") {
				return fmt.Errorf("%s status.capabilities = %v, want composition (from package/function/crossplane.yaml)", r.GetName(), caps)
			}
			return nil
		})
		// The package's Input CRD is for tools (crossplane beta validate):
		// the xpkg spec says Crossplane does not install a Function's
		// CRDs, and it does not.
	})

	step(t, "the External runtime runs the Provider", func(t *testing.T) {
		var rev string
		eventually(t, 2*time.Minute, "the Provider has an active revision", func() error {
			r, err := activeRevision(t, cp, "ProviderRevision", "provider-minicluster-burst")
			if err != nil {
				return err
			}
			rev = r.GetName()
			return nil
		})
		if err := cp.PrepareRuntime(ctx(t), "ProviderRevision", rev); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "the Provider's revision is RevisionHealthy and its CRDs are established", func() error {
			r, err := activeRevision(t, cp, "ProviderRevision", "provider-minicluster-burst")
			if err != nil {
				return err
			}
			if err := wantCondition(r, "RevisionHealthy", "True"); err != nil {
				return err
			}
			return crdsEstablished(t, cp, "bursts.bursting.flux-framework.org", "providerconfigs.bursting.flux-framework.org",
				"clusterproviderconfigs.bursting.flux-framework.org", "providerconfigusages.bursting.flux-framework.org")
		})
		p, err := cp.StartProvider(ctx(t), pkgs.provider, cp.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Stop(10 * time.Second) })
		if err := cp.ReportRuntime(ctx(t), "ProviderRevision", rev, ""); err != nil {
			t.Fatal(err)
		}
	})

	step(t, "every package is Installed and Healthy and the XRD is established", func(t *testing.T) {
		for _, p := range [][2]string{{"Configuration", configuration}, {"Function", fn}, {"Provider", "provider-minicluster-burst"}} {
			eventually(t, 2*time.Minute, p[0]+" "+p[1]+" is Installed and Healthy", func() error {
				u := pkgObject(p[0], p[1])
				if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(u), u); err != nil {
					return err
				}
				return errors.Join(wantCondition(u, "Installed", "True"), wantCondition(u, "Healthy", "True"))
			})
		}
		// WaitXRD wants Offered too when the XRD has a claim.
		if err := cp.WaitXRD(ctx(t), xrd, time.Minute); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the Composition's revision has a valid pipeline", func() error {
			l := &unstructured.UnstructuredList{}
			l.SetAPIVersion("apiextensions.crossplane.io/v1")
			l.SetKind("CompositionRevisionList")
			if err := cp.Client.List(ctx(t), l, client.MatchingLabels{"crossplane.io/composition-name": harness.CompositionName}); err != nil {
				return err
			}
			if len(l.Items) == 0 {
				return errors.New("no CompositionRevision yet")
			}
			return wantCondition(&l.Items[len(l.Items)-1], "ValidPipeline", "True")
		})
	})

	step(t, "a hello-world MiniCluster composes its cluster", func(t *testing.T) {
		const ns, name = "tenant-install", "flux-sample"
		createNamespace(t, cp, ns)
		createClaim(t, cp, exampleClaim(t, cp, helloWorld, ns, ""))
		eventually(t, 2*time.Minute, "the MiniCluster is Synced and its objects exist", func() error {
			c, err := getClaim(t, cp, ns, name)
			if err != nil {
				return err
			}
			if err := wantCondition(c, "Synced", "True"); err != nil {
				return err
			}
			_, err = getComposed(t, cp, ns, name)
			return err
		})
		checkHelloWorld(t, cp, ns, name)
		// The function from the package stamps its version.
		if err := composedBy(t, cp, ns, name, packageVersion); err != nil {
			t.Error(err)
		}
	})
}

// ---------------------------------------------------------------- helpers

// requireE2E skips a test unless MC_E2E is set, like controlPlane does.
func requireE2E(t *testing.T) {
	t.Helper()
	if v := os.Getenv(EnvE2E); v == "" || v == "0" {
		t.Skipf("end-to-end tests run a real control plane: set %s=1 (make e2e does, after installing the tools)", EnvE2E)
	}
}

// startOwnControlPlane starts a control plane for one test, stopped when
// the test ends; when it fails the logs are kept and their last lines
// printed.
func startOwnControlPlane(t *testing.T, opts harness.Options) *harness.ControlPlane {
	t.Helper()
	opts.Debug = opts.Debug || os.Getenv("MC_E2E_DEBUG") != ""
	if opts.Logf == nil {
		opts.Logf = func(format string, args ...any) {
			fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05.000")}, args...)...)
		}
	}
	c, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	cp, err := harness.Start(c, opts)
	if err != nil {
		if errors.Is(err, harness.ErrToolsMissing) {
			t.Fatalf("%s is set but %v", EnvE2E, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			cp.KeepDir()
			fmt.Fprintf(os.Stderr, "\ne2e: %s failed; %s control-plane logs are kept in %s\n", t.Name(), opts.Name, cp.LogDir)
			cp.DumpLogs(os.Stderr, 40)
		}
		if err := cp.Stop(); err != nil {
			t.Log(err)
		}
	})
	t.Logf("%s control plane up in %s", opts.Name, time.Since(start).Round(100*time.Millisecond))
	return cp
}

// toolPath finds a tool from its environment variable or the tool cache; a
// missing tool fails the test (MC_E2E is set).
func toolPath(t *testing.T, repo, env, name string) string {
	t.Helper()
	if p := os.Getenv(env); p != "" {
		return p
	}
	out, err := exec.Command(filepath.Join(repo, "hack", "tools.sh"), "path", name).Output()
	if p := strings.TrimSpace(string(out)); err == nil && p != "" {
		return p
	}
	t.Fatalf("%s is set but %s is not installed: run hack/tools.sh install %s (or set %s)", EnvE2E, name, name, env)
	return ""
}

// runCmd runs a command in dir, failing the test with its output.
func runCmd(t *testing.T, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// packagePlatforms are the platforms of the packages' runtime images, as
// make packages builds them (PLATFORMS).
var packagePlatforms = []string{"linux/amd64", "linux/arm64"}

// functionVersionLDFlag is make build-linux's VERSION_LDFLAG: the function
// stamps its version on what it composes.
const functionVersionLDFlag = "-X github.com/flux-framework/minicluster-crossplane/function.Version="

// allPackages are the names of the project's packages.
var allPackages = []string{"function-minicluster", "provider-minicluster-burst", "configuration-minicluster", "configuration-minicluster-v2"}

// buildPackages builds packages (names, as allPackages) of version from
// the current tree into dir/packages, as make packages VERSION=<version>
// REGISTRY=<registry> does: make build-linux's static binaries for every
// platform (the function with its version), then hack/packages. It
// returns the directory of the .xpkg files.
func buildPackages(t *testing.T, repo, cli, dir, version, registry string, pkgs []string) string {
	t.Helper()
	bin := filepath.Join(dir, "bin")
	var binaries []string
	for b, p := range map[string]string{"function": "function-minicluster", "provider": "provider-minicluster-burst"} {
		if slices.Contains(pkgs, p) {
			binaries = append(binaries, b)
		}
	}
	for _, plat := range packagePlatforms {
		goos, arch, _ := strings.Cut(plat, "/")
		for _, b := range binaries {
			ldflags := "-s -w"
			if b == "function" {
				ldflags += " " + functionVersionLDFlag + version
			}
			runCmd(t, repo, []string{"CGO_ENABLED=0", "GOOS=" + goos, "GOARCH=" + arch},
				"go", "build", "-trimpath", "-ldflags="+ldflags, "-o", filepath.Join(bin, goos+"_"+arch, b), "./cmd/"+b)
		}
	}
	out := filepath.Join(dir, "packages")
	runCmd(t, repo, nil, "go", "run", "./hack/packages", "--crossplane", cli, "--bin", bin, "--platforms", strings.Join(packagePlatforms, ","),
		"--out", out, "--version", version, "--registry", registry, "--packages", strings.Join(pkgs, ","))
	return out
}

// pushPackages pushes the packages buildPackages built, as make publish
// does: the Function and the Provider as multi-platform packages (one
// .xpkg a platform, one index), each Configuration (either shape's) as one
// image. No flag is
// needed for a registry on loopback.
func pushPackages(t *testing.T, repo, cli, dir, version, registry string, pkgs []string) {
	t.Helper()
	for _, p := range pkgs {
		files := []string{filepath.Join(dir, p+".xpkg")}
		if !strings.HasPrefix(p, "configuration-") {
			files = files[:0]
			for _, plat := range packagePlatforms {
				_, arch, _ := strings.Cut(plat, "/")
				files = append(files, filepath.Join(dir, p+"-"+arch+".xpkg"))
			}
		}
		runCmd(t, repo, nil, cli, "xpkg", "push", "-f", strings.Join(files, ","), registry+"/"+p+":"+version)
	}
}

// runtimeBinary pulls a pushed package from the registry and writes the
// runtime binary its image runs (checking the image's entrypoint is
// /<name>) to dir/pkg-<name>.
// platforms lists the platforms of a multi-platform package, sorted.
func platforms(t *testing.T, crane, ref string) []string {
	t.Helper()
	out, err := exec.Command(crane, "manifest", ref).Output()
	if err != nil {
		t.Fatalf("crane manifest %s: %v", ref, err)
	}
	var index struct {
		Manifests []struct {
			Platform *struct{ OS, Architecture string }
		}
	}
	if err := json.Unmarshal(out, &index); err != nil {
		t.Fatalf("crane manifest %s: %v", ref, err)
	}
	var got []string
	for _, m := range index.Manifests {
		if m.Platform != nil {
			got = append(got, m.Platform.OS+"/"+m.Platform.Architecture)
		}
	}
	slices.Sort(got)
	return got
}

func runtimeBinary(t *testing.T, crane, ref, name, dir string) string {
	t.Helper()
	out, err := exec.Command(crane, "config", ref).Output()
	if err != nil {
		t.Fatalf("crane config %s: %v", ref, err)
	}
	var cfg struct {
		Architecture, OS string
		Config           struct{ Entrypoint []string }
	}
	if err := json.Unmarshal(out, &cfg); err != nil {
		t.Fatalf("crane config %s: %v", ref, err)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/" + name}) || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Fatalf("%s: image %s/%s with entrypoint %v, want linux/amd64 running /%s", ref, cfg.OS, cfg.Architecture, cfg.Config.Entrypoint, name)
	}
	fs := filepath.Join(dir, "pkg-"+name+".tar")
	if b, err := exec.Command(crane, "export", ref, fs).CombinedOutput(); err != nil {
		t.Fatalf("crane export %s: %v\n%s", ref, err, b)
	}
	f, err := os.Open(fs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() //nolint:errcheck // read-only
	tr := tar.NewReader(f)
	var entries []string
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, h.Name)
		if strings.TrimPrefix(h.Name, "/") != name || h.Typeflag != tar.TypeReg {
			continue
		}
		path := filepath.Join(dir, "pkg-"+name)
		w, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755) //nolint:gosec // an executable the test runs
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, tr); err != nil { //nolint:gosec // our own binary
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
	t.Fatalf("%s: no /%s in the image (files: %v)", ref, name, entries)
	return ""
}

// pkgObject is a pkg.crossplane.io/v1 package (Configuration, Function or
// Provider) by name.
func pkgObject(kind, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("pkg.crossplane.io/v1")
	u.SetKind(kind)
	u.SetName(name)
	return u
}

// activeRevision returns the active revision (kind FunctionRevision or
// ProviderRevision) of a package.
func activeRevision(t *testing.T, cp *harness.ControlPlane, kind, pkg string) (*unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("pkg.crossplane.io/v1")
	l.SetKind(kind + "List")
	if err := cp.Client.List(ctx(t), l, client.MatchingLabels{"pkg.crossplane.io/package": pkg}); err != nil {
		return nil, err
	}
	for i := range l.Items {
		if s, _, _ := unstructured.NestedString(l.Items[i].Object, "spec", "desiredState"); s == "Active" {
			return &l.Items[i], nil
		}
	}
	return nil, fmt.Errorf("no active %s of %s yet (%d revisions)", kind, pkg, len(l.Items))
}

func crdsEstablished(t *testing.T, cp *harness.ControlPlane, names ...string) error {
	for _, n := range names {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := cp.Client.Get(ctx(t), client.ObjectKey{Name: n}, crd); err != nil {
			return err
		}
		ok := false
		for _, c := range crd.Status.Conditions {
			ok = ok || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
		}
		if !ok {
			return fmt.Errorf("CRD %s is not established", n)
		}
	}
	return nil
}

// conditions summarises an object's status conditions.
func conditions(u *unstructured.Unstructured) string {
	cs, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var out []string
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			s := fmt.Sprintf("%v=%v", m["type"], m["status"])
			if msg, _ := m["message"].(string); msg != "" {
				s += " (" + msg + ")"
			}
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "no conditions"
	}
	return strings.Join(out, ", ")
}

// packageRegistry is what the package tests share: the repository, the
// Crossplane CLI and crane, a work directory, and a loopback registry (its
// organisation flux-framework) that runs until the test ends.
func packageRegistry(t *testing.T) (repo, cli, crane, work, registry string) {
	t.Helper()
	repo, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cli = toolPath(t, repo, envCrossplaneCLI, "crossplane-cli")
	crane = toolPath(t, repo, envCrane, "crane")
	work = t.TempDir()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	reg, err := harness.StartRegistry(c, crane, filepath.Join(work, "registry"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Stop() })
	t.Logf("registry on %s", reg.Addr)
	return repo, cli, crane, work, reg.Addr + "/flux-framework"
}
