package e2e_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// annotationFunctionVersion is function.AnnotationFunctionVersion: the
// version of the function that composed an object.
const annotationFunctionVersion = "minicluster.flux-framework.org/function-version"

// TestUpgradeFromPackages upgrades an installation from packages the way
// the README tells a platform team to, with MiniClusters running. The
// v0.1.0 packages built from the current tree are installed (as in
// TestInstallFromPackages) and two MiniClusters run; then v0.2.0 (the same
// code: the function stamps its version, set at build time, on what it
// composes) is pushed and the Configuration moved to it. Crossplane v2.4
// does not move the Function along by default: the Configuration's new
// revision reports the Function's version as incompatible with >=v0.2.0
// (Healthy=False, the XRD and Composition stay installed) until the
// platform team moves the Function. The new function then serves the
// Function's new revision; the running clusters, composed again by it,
// keep their Job (same object, same spec), Secret and CURVE key, and a new
// MiniCluster is composed by v0.2.0.
func TestUpgradeFromPackages(t *testing.T) { testUpgrade(t, false) }

// TestUpgradeFromPackagesDependencyUpgrades is TestUpgradeFromPackages
// with Crossplane's alpha flag --enable-dependency-version-upgrades, with
// which Crossplane moves the Function along with the Configuration, within
// a second of the Configuration's new revision (which is why
// TestUpgradeFromPackages's 10 seconds without the flag are enough to tell
// it does not).
func TestUpgradeFromPackagesDependencyUpgrades(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: TestUpgradeFromPackages covers the upgrade; this adds the alpha flag, about a minute")
	}
	testUpgrade(t, true)
}

func testUpgrade(t *testing.T, dependencyUpgrades bool) {
	requireE2E(t)
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the External runtime here runs the linux/amd64 image's binary; this is %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	begin := time.Now()
	top := t // what outlives a step is cleaned up when the test ends
	repo, cli, crane, work, registry := packageRegistry(t)
	const v1, v2 = "v0.1.0", "v0.2.0"

	// release builds and pushes the packages of a version and returns the
	// function binary its image carries.
	release := func(t *testing.T, version string) string {
		start := time.Now()
		dir := filepath.Join(work, version)
		// Not the Provider: nothing here needs it.
		pkgs := []string{"function-minicluster", "configuration-minicluster"}
		out := buildPackages(t, repo, cli, dir, version, registry, pkgs)
		pushPackages(t, repo, cli, out, version, registry, pkgs)
		t.Logf("built and pushed the %s packages in %s", version, time.Since(start).Round(100*time.Millisecond))
		return runtimeBinary(t, crane, registry+"/function-minicluster:"+version, "function", dir)
	}

	// Only v0.1.0 is in the registry when the Configuration is installed:
	// its dependency (>=v0.1.0) resolves to it.
	var xpFlags []string
	if dependencyUpgrades {
		xpFlags = []string{"--enable-dependency-version-upgrades"}
	}
	var fnBin1 string
	step(t, "build and push "+v1, func(t *testing.T) { fnBin1 = release(t, v1) })

	cp := startOwnControlPlane(t, harness.Options{
		Name: "upgrade", SkipInstall: true, SkipFunctionRegistration: true, FunctionBinary: fnBin1, CrossplaneFlags: xpFlags,
	})

	var fn string
	step(t, "install the "+v1+" Configuration", func(t *testing.T) {
		if err := cp.ApplyFile(ctx(t), "compositions/rbac.yaml"); err != nil {
			t.Fatal(err)
		}
		cfg := pkgObject("Configuration", "configuration-minicluster")
		if err := unstructured.SetNestedField(cfg.Object, registry+"/configuration-minicluster:"+v1, "spec", "package"); err != nil {
			t.Fatal(err)
		}
		if err := cp.Client.Create(ctx(t), cfg); err != nil {
			t.Fatal(err)
		}
		eventually(t, 3*time.Minute, "Crossplane installs the Function "+v1, func() error {
			f, err := dependencyFunction(t, cp, registry)
			if err != nil {
				return err
			}
			fn = f.GetName()
			return wantPackage(f, registry+"/function-minicluster:"+v1)
		})
		// The local function process (the v0.1.0 binary) is the runtime
		// of the Function's first revision.
		rev := servableRevision(t, cp, fn, v1)
		if err := cp.ServeFunctionRevision(ctx(t), rev); err != nil {
			t.Fatal(err)
		}
		installed(t, cp, fn, v1)
		if err := cp.WaitXRD(ctx(t), harness.XRDName, time.Minute); err != nil {
			t.Fatal(err)
		}
	})

	running := map[string]*cluster{}
	maxSize := map[string]int64{}
	step(t, "two MiniClusters run on "+v1, func(t *testing.T) {
		for _, ns := range []string{"upgrade-a", "upgrade-b"} {
			createNamespace(t, cp, ns)
			// Not createClaim: the clusters outlive this step.
			if err := cp.Client.Create(ctx(t), exampleClaim(t, cp, helloWorld, ns, "")); err != nil {
				t.Fatal(err)
			}
		}
		for _, ns := range []string{"upgrade-a", "upgrade-b"} {
			runningCluster(t, cp, ns, "flux-sample")
			eventually(t, time.Minute, ns+"/flux-sample is composed by "+v1, func() error {
				return composedBy(t, cp, ns, "flux-sample", v1)
			})
			running[ns] = snapshot(t, cp, ns, "flux-sample")
			maxSize[ns] = maximumSize(t, cp, ns, "flux-sample")
		}
	})

	var fnBin2 string
	step(t, "build and push "+v2, func(t *testing.T) { fnBin2 = release(t, v2) })

	step(t, "upgrade the Configuration to "+v2, func(t *testing.T) {
		if err := mergePatchPkg(t, cp, "Configuration", "configuration-minicluster",
			`{"spec":{"package":"`+registry+`/configuration-minicluster:`+v2+`"}}`); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "the Configuration's active revision is "+v2, func() error {
			r, err := activeRevision(t, cp, "ConfigurationRevision", "configuration-minicluster")
			if err != nil {
				return err
			}
			if img, _, _ := unstructured.NestedString(r.Object, "spec", "image"); !strings.HasSuffix(img, ":"+v2) {
				return fmt.Errorf("active revision %s is %s", r.GetName(), img)
			}
			return nil
		})
	})

	step(t, "the Function follows the Configuration", func(t *testing.T) {
		f := pkgObject("Function", fn)
		if dependencyUpgrades {
			start := time.Now()
			eventually(t, 2*time.Minute, "Crossplane moves the Function to "+v2, func() error {
				if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(f), f); err != nil {
					return err
				}
				return wantPackage(f, registry+"/function-minicluster:"+v2)
			})
			t.Logf("Crossplane moved Function %s to %s %s after the Configuration's %s revision was active",
				fn, v2, time.Since(start).Round(100*time.Millisecond), v2)
			return
		}
		// Without --enable-dependency-version-upgrades (alpha in
		// Crossplane v2.4) Crossplane does not move a dependency: the
		// Configuration reports the dependency it cannot satisfy and the
		// Function stays where it is until the platform team moves it.
		consistently(t, 10*time.Second, "the Function stays at "+v1, func() error {
			if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(f), f); err != nil {
				return err
			}
			return wantPackage(f, registry+"/function-minicluster:"+v1)
		})
		cfg := pkgObject("Configuration", "configuration-minicluster")
		eventually(t, time.Minute, "the Configuration reports the Function's version as incompatible with >="+v2, func() error {
			if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(cfg), cfg); err != nil {
				return err
			}
			if st, msg := condition(cfg, "Healthy"); st != "False" || !strings.Contains(msg, "function-minicluster@"+v1+" is incompatible with constraint >="+v2) {
				return fmt.Errorf("Healthy=%s (%s), want False naming function-minicluster@%s as incompatible with >=%s", st, msg, v1, v2)
			}
			return nil
		})
		t.Logf("Configuration %s: %s", v2, conditions(cfg))
		// The XRD and the Composition stay, and so does every MiniCluster.
		if st, _ := condition(cfg, "Installed"); st != "True" {
			t.Errorf("Configuration %s: Installed=%s, want True", v2, st)
		}
		if err := cp.WaitXRD(ctx(t), harness.XRDName, 10*time.Second); err != nil {
			t.Error(err)
		}
		for _, ns := range []string{"upgrade-a", "upgrade-b"} {
			c, err := getClaim(t, cp, ns, "flux-sample")
			if err != nil {
				t.Fatal(err)
			}
			if err := errors.Join(wantCondition(c, "Synced", "True"), wantCondition(c, "Ready", "True")); err != nil {
				t.Errorf("%s/flux-sample while the Function is behind: %v", ns, err)
			}
		}
		// What the README tells the platform team to do: move the
		// Function to the version the Configuration needs.
		if err := mergePatchPkg(t, cp, "Function", fn, `{"spec":{"package":"`+registry+`/function-minicluster:`+v2+`"}}`); err != nil {
			t.Fatal(err)
		}
	})

	var fnProc2 *harness.Process
	step(t, "the "+v2+" function serves the Function's new revision", func(t *testing.T) {
		rev := servableRevision(t, cp, fn, v2)
		p, addr, err := cp.ServeFunctionRevisionWith(ctx(t), rev, fnBin2)
		if err != nil {
			t.Fatal(err)
		}
		fnProc2 = p
		top.Cleanup(func() { _ = p.Stop(10 * time.Second) })
		t.Logf("FunctionRevision %s: endpoint %s (the %s function, pid %d)", rev, addr, v2, p.Pid())
		installed(t, cp, fn, v2)
		// The old revision's pod goes away, as the Deployment runtime
		// deletes it: from now on only the v0.2.0 function can compose.
		if err := cp.StopFunction(); err != nil {
			t.Fatal(err)
		}
	})

	step(t, "running MiniClusters keep their Job, Secret and CURVE key", func(t *testing.T) {
		for _, ns := range []string{"upgrade-a", "upgrade-b"} {
			cl := running[ns]
			if err := cl.unchanged(t, cp, false); err != nil {
				t.Fatalf("%s right after the upgrade: %v", ns, err)
			}
			// Nothing of a running cluster changed, so nothing made
			// Crossplane compose it again yet (the function's responses
			// last 24h). A change to the claim does: the v0.2.0
			// function composes it, in place.
			if err := mergePatch(t, cp, ns, "flux-sample", `{"metadata":{"annotations":{"e2e.flux-framework.org/upgraded":"`+v2+`"}}}`); err != nil {
				t.Fatal(err)
			}
			eventually(t, 2*time.Minute, ns+"/flux-sample is composed by "+v2, func() error {
				if err := fnProc2.Alive(); err != nil {
					t.Fatal(err)
				}
				return composedBy(t, cp, ns, "flux-sample", v2)
			})
			if err := cl.unchanged(t, cp, false); err != nil {
				t.Errorf("%s after the %s function composed it: %v", ns, v2, err)
			}
			if err := cl.sameKey(t, cp); err != nil {
				t.Error(err)
			}
			job := getJob(t, cp, ns, "flux-sample")
			if job.Generation != cl.objs.Job.Generation {
				t.Errorf("%s: Job %s spec changed (generation %d, was %d)", ns, job.Name, job.Generation, cl.objs.Job.Generation)
			}
			// The same code composes the same scripts and host list.
			now, err := getComposed(t, cp, ns, "flux-sample")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(cl.objs.ConfigMap.Data, now.ConfigMap.Data); diff != "" {
				t.Errorf("%s: ConfigMap %s changed (-before, +after):\n%s", ns, now.ConfigMap.Name, diff)
			}
			eventually(t, time.Minute, ns+"/flux-sample is Synced, Ready and Running", func() error {
				c, err := getClaim(t, cp, ns, "flux-sample")
				if err != nil {
					return err
				}
				return errors.Join(wantCondition(c, "Synced", "True"), wantCondition(c, "Ready", "True"), wantStatus(c, map[string]any{"phase": "Running"}))
			})
			if got := maximumSize(t, cp, ns, "flux-sample"); got != maxSize[ns] {
				t.Errorf("%s: status.maximumSize %d, was %d before the upgrade", ns, got, maxSize[ns])
			}
		}
	})

	step(t, "a new MiniCluster is composed by "+v2, func(t *testing.T) {
		const ns = "upgrade-c"
		createNamespace(t, cp, ns)
		createClaim(t, cp, exampleClaim(t, cp, helloWorld, ns, ""))
		eventually(t, 2*time.Minute, ns+"/flux-sample is Synced and composed by "+v2, func() error {
			c, err := getClaim(t, cp, ns, "flux-sample")
			if err != nil {
				return err
			}
			if err := wantCondition(c, "Synced", "True"); err != nil {
				return err
			}
			return composedBy(t, cp, ns, "flux-sample", v2)
		})
		checkHelloWorld(t, cp, ns, "flux-sample")
	})
	t.Logf("%s took %s", t.Name(), time.Since(begin).Round(100*time.Millisecond))
}

// dependencyFunction is the Function Crossplane installed for the
// Configuration's dependency on <registry>/function-minicluster.
func dependencyFunction(t *testing.T, cp *harness.ControlPlane, registry string) (*unstructured.Unstructured, error) {
	l := &unstructured.UnstructuredList{}
	l.SetAPIVersion("pkg.crossplane.io/v1")
	l.SetKind("FunctionList")
	if err := cp.Client.List(ctx(t), l); err != nil {
		return nil, err
	}
	for i := range l.Items {
		if p, _, _ := unstructured.NestedString(l.Items[i].Object, "spec", "package"); strings.HasPrefix(p, registry+"/function-minicluster:") {
			return &l.Items[i], nil
		}
	}
	cfg := pkgObject("Configuration", "configuration-minicluster")
	_ = cp.Client.Get(ctx(t), client.ObjectKeyFromObject(cfg), cfg)
	return nil, fmt.Errorf("no Function yet; Configuration: %s", conditions(cfg))
}

func wantPackage(pkg *unstructured.Unstructured, want string) error {
	if p, _, _ := unstructured.NestedString(pkg.Object, "spec", "package"); p != want {
		return fmt.Errorf("%s %s is package %s, want %s", pkg.GetKind(), pkg.GetName(), p, want)
	}
	return nil
}

// servableRevision waits until the Function's active revision is of
// version and waits for its runtime, and returns its name.
func servableRevision(t *testing.T, cp *harness.ControlPlane, fn, version string) string {
	t.Helper()
	var rev string
	eventually(t, 2*time.Minute, "Function "+fn+" has an active "+version+" revision waiting for its runtime", func() error {
		r, err := activeRevision(t, cp, "FunctionRevision", fn)
		if err != nil {
			return err
		}
		if img, _, _ := unstructured.NestedString(r.Object, "spec", "image"); !strings.HasSuffix(img, ":"+version) {
			return fmt.Errorf("active revision %s is %s", r.GetName(), img)
		}
		if st, _ := condition(r, "RevisionHealthy"); st == "" {
			return fmt.Errorf("%s: no RevisionHealthy condition yet", r.GetName())
		}
		rev = r.GetName()
		return nil
	})
	return rev
}

// installed waits until the Function and the Configuration are Installed
// and Healthy with the Function at version.
func installed(t *testing.T, cp *harness.ControlPlane, fn, version string) {
	t.Helper()
	for _, p := range [][2]string{{"Function", fn}, {"Configuration", "configuration-minicluster"}} {
		eventually(t, 2*time.Minute, p[0]+" "+p[1]+" is Installed and Healthy", func() error {
			u := pkgObject(p[0], p[1])
			if err := cp.Client.Get(ctx(t), client.ObjectKeyFromObject(u), u); err != nil {
				return err
			}
			return errors.Join(wantCondition(u, "Installed", "True"), wantCondition(u, "Healthy", "True"))
		})
	}
	r, err := activeRevision(t, cp, "FunctionRevision", fn)
	if err != nil {
		t.Fatal(err)
	}
	if img, _, _ := unstructured.NestedString(r.Object, "spec", "image"); !strings.HasSuffix(img, ":"+version) {
		t.Fatalf("Function %s: active revision %s is %s, want %s", fn, r.GetName(), img, version)
	}
}

// composedBy checks that every object of a MiniCluster was composed by the
// function of version.
func composedBy(t *testing.T, cp *harness.ControlPlane, ns, name, version string) error {
	objs, err := getComposed(t, cp, ns, name)
	if err != nil {
		return err
	}
	var errs []string
	for _, o := range objs.objects() {
		if v := o.GetAnnotations()[annotationFunctionVersion]; v != version {
			errs = append(errs, fmt.Sprintf("%T %s has %s=%q", o, o.GetName(), annotationFunctionVersion, v))
		}
	}
	return errorsJoin(errs)
}

// maximumSize is a MiniCluster's status.maximumSize, which the function
// reads back on every reconcile (it fixes the broker's host list).
func maximumSize(t *testing.T, cp *harness.ControlPlane, ns, name string) int64 {
	t.Helper()
	c, err := getClaim(t, cp, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	n, ok, err := unstructured.NestedInt64(c.Object, "status", "maximumSize")
	if err != nil || !ok || n < 1 {
		t.Fatalf("%s/%s: status.maximumSize %d (set: %t, %v), want a size", ns, name, n, ok, err)
	}
	return n
}

// mergePatchPkg merge-patches a package (Configuration, Function,
// Provider), as kubectl patch --type=merge would.
func mergePatchPkg(t *testing.T, cp *harness.ControlPlane, kind, name, patch string) error {
	u := pkgObject(kind, name)
	return cp.Client.Patch(ctx(t), u, client.RawPatch("application/merge-patch+json", []byte(patch)))
}
