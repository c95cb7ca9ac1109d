package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/badclaims"
)

const (
	badClaimsNamespace = "badclaims"
	// badClaimsWorkers bounds the requests in flight.
	badClaimsWorkers = 8
	// badClaimsWait bounds the wait for the function to refuse every
	// function-layer claim, from the last create.
	badClaimsWait = 5 * time.Minute
)

// badClaimRun is what one bad claim came to: the CLI's verdict and the
// control plane's.
type badClaimRun struct {
	c     badclaims.Case
	claim *unstructured.Unstructured
	// cli is the CLI's Fatal message ("" when it composed the claim);
	// cliErr an error of driver.Run itself.
	cli    string
	cliErr error
	// created tells whether the claim was created (function layer).
	created bool
	// serverErr is the API server's answer to the (dry-run) create.
	serverErr error
	// status and message of the claim's Valid condition, last seen.
	validStatus, validMessage string
}

// TestBadClaimsOnCluster runs the bad-claim table (test/badclaims) against a
// real control plane: each rule fires with the same message in the CLI and
// on the cluster:
//
//   - a schema-layer claim must be refused by the API server (a dry-run
//     create), and every field error of the server's message must appear,
//     as the server words it, in the CLI's Fatal message;
//   - a function-layer claim must be accepted by the API server and, once
//     the function has seen it, have Valid=False with exactly the CLI's
//     Fatal message.
//
// Function-layer claims are all created first, then polled together.
func TestBadClaimsOnCluster(t *testing.T) {
	cp := controlPlane(t)
	createNamespace(t, cp, badClaimsNamespace)

	var runs []*badClaimRun
	for _, c := range badclaims.Cases() {
		u := &unstructured.Unstructured{Object: c.Claim}
		u.SetNamespace(badClaimsNamespace)
		r := &badClaimRun{c: c, claim: u}
		// The CLI renders the very claim the cluster gets (same namespace).
		out, err := driver.Run(context.Background(), function.New(), driver.Options{Claim: c.JSON()})
		if err != nil {
			r.cliErr = err
		} else {
			r.cli = badclaims.FatalMessage(out)
		}
		runs = append(runs, r)
	}

	t.Cleanup(func() { deleteBadClaims(t, cp.Client, runs) })

	// Every create, in parallel: dry runs for the schema layer, real
	// creates for the function layer.
	start := time.Now()
	badParallel(runs, badClaimsWorkers, func(r *badClaimRun) {
		c, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		obj := r.claim.DeepCopy()
		switch r.c.Layer {
		case badclaims.LayerSchema:
			r.serverErr = cp.Client.Create(c, obj, client.DryRunAll)
		default:
			r.serverErr = cp.Client.Create(c, obj)
			r.created = r.serverErr == nil
		}
	})
	t.Logf("created %d claims (schema-layer ones as dry runs) in %s", len(runs), time.Since(start).Round(100*time.Millisecond))

	// Wait until the function has refused every function-layer claim.
	waitStart := time.Now()
	deadline := waitStart.Add(badClaimsWait)
	pending := 0
	for {
		pending = pollBadClaims(t, cp.Client, runs)
		if pending == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("function-layer claims: %d without Valid=False after %s", pending, time.Since(waitStart).Round(100*time.Millisecond))

	for _, r := range runs {
		t.Run(r.c.Name, func(t *testing.T) {
			if r.cliErr != nil {
				t.Fatalf("%s\ndriver.Run: %v", r.c.Reason, r.cliErr)
			}
			switch r.c.Layer {
			case badclaims.LayerSchema:
				badCheckSchemaLayer(t, r)
			default:
				badCheckFunctionLayer(t, r)
			}
		})
	}
}

func badCheckSchemaLayer(t *testing.T, r *badClaimRun) {
	t.Helper()
	if r.serverErr == nil {
		t.Fatalf("%s\nthe API server accepts the claim, want it refused with %q (a gap in the schema, or the case belongs to the function layer); the CLI says: %s",
			r.c.Reason, r.c.Want, badShorten(badOrNone(r.cli), 600))
	}
	if !kerrors.IsInvalid(r.serverErr) {
		t.Fatalf("%s\nthe API server refuses the claim, but not as invalid (%s): %v", r.c.Reason, kerrors.ReasonForError(r.serverErr), r.serverErr)
	}
	lines := badServerFieldErrors(r.serverErr)
	server := strings.Join(lines, "; ")
	if piece := badclaims.SecretPiece(r.serverErr.Error(), r.c.Secret); piece != "" {
		t.Errorf("%s\nthe API server's message repeats part of the certificate's key text (%q)", r.c.Reason, piece)
	}
	if !r.c.Matches(server) {
		t.Errorf("%s\nthe API server's message does not contain the expected one\n want: %s\n  got: %s", r.c.Reason, r.c.Want, badShorten(server, 1500))
	}
	if r.cli == "" {
		t.Fatalf("%s\nthe API server refuses the claim, but the CLI composes it; the server says: %s", r.c.Reason, badShorten(server, 1500))
	}
	for _, l := range lines {
		if !inCLIMessage(r.cli, l) {
			t.Errorf("%s\nthe API server's field error is not in the CLI's message\n server: %s\n    CLI: %s", r.c.Reason, badShorten(l, 800), badShorten(r.cli, 1500))
		}
	}
}

func badCheckFunctionLayer(t *testing.T, r *badClaimRun) {
	t.Helper()
	if r.serverErr != nil {
		t.Fatalf("%s\nthe API server refuses the claim, want it accepted and refused by the function (move the case to the schema layer if the schema now covers it): %s",
			r.c.Reason, badShorten(r.serverErr.Error(), 1500))
	}
	if r.cli == "" {
		t.Errorf("%s\nthe CLI composes the claim, want it refused with %q", r.c.Reason, r.c.Want)
	}
	if r.validStatus != "False" {
		t.Fatalf("%s\nthe claim's Valid condition is %q (%s), want False within %s; the CLI says: %s",
			r.c.Reason, r.validStatus, badShorten(r.validMessage, 600), badClaimsWait, badShorten(badOrNone(r.cli), 600))
	}
	if r.validMessage != r.cli {
		t.Errorf("%s\nthe claim's Valid=False message differs from the CLI's Fatal message\ncluster: %s\n    CLI: %s", r.c.Reason, badShorten(r.validMessage, 1500), badShorten(r.cli, 1500))
	}
	if piece := badclaims.SecretPiece(r.validMessage, r.c.Secret); piece != "" {
		t.Errorf("%s\nthe claim's condition repeats part of the certificate's key text (%q)", r.c.Reason, piece)
	}
	if !r.c.Matches(r.validMessage) {
		t.Errorf("%s\nthe claim's Valid=False message does not contain the expected one\n want: %s\n  got: %s", r.c.Reason, r.c.Want, badShorten(r.validMessage, 1500))
	}
}

// pollBadClaims lists the claims and records each function-layer claim's
// Valid condition; it returns how many are not yet Valid=False.
func pollBadClaims(t *testing.T, c client.Client, runs []*badClaimRun) int {
	t.Helper()
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(claimGVK.GroupVersion().WithKind(claimGVK.Kind + "List"))
	lctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.List(lctx, list, client.InNamespace(badClaimsNamespace)); err != nil {
		t.Logf("cannot list claims: %v", err)
		return -1
	}
	byName := make(map[string]*unstructured.Unstructured, len(list.Items))
	for i := range list.Items {
		byName[list.Items[i].GetName()] = &list.Items[i]
	}
	pending := 0
	for _, r := range runs {
		if !r.created {
			continue
		}
		if u, ok := byName[r.claim.GetName()]; ok {
			r.validStatus, r.validMessage = condition(u, v1alpha2.ConditionValid)
		}
		if r.validStatus != "False" {
			pending++
		}
	}
	return pending
}

// celValueOf134 drops what kube-apiserver 1.34 writes as the value of a
// failed CEL rule on an object ("object"); 1.35's validators, which the CLI
// runs, write no value there. The rule, its field and its message are the
// same.
var celValueOf134 = strings.NewReplacer(`Invalid value: "object": `, "Invalid value: ")

// celScalarOf134 is what kube-apiserver 1.34 writes as the value of a failed
// CEL rule on a scalar field: its type. 1.35's validators write the value.
var celScalarOf134 = regexp.MustCompile(`Invalid value: "(string|integer|number|boolean)": `)

// inCLIMessage tells whether the API server's field error line is in the
// CLI's message, as 1.35 would write it.
func inCLIMessage(cli, line string) bool {
	line = celValueOf134.Replace(line)
	if strings.Contains(cli, line) {
		return true
	}
	loc := celScalarOf134.FindStringIndex(line)
	if loc == nil {
		return false
	}
	// The same field and message, around any value on the same line.
	re := regexp.MustCompile(regexp.QuoteMeta(line[:loc[0]]) + `Invalid value: [^\n]*: ` + regexp.QuoteMeta(line[loc[1]:]))
	return re.MatchString(cli)
}

// badServerFieldErrors are the field errors of an API server's refusal, each
// as field.Error.Error() writes it ("spec.size: Invalid value: ..."), which
// is how the CLI, evaluating the same rules, writes them too.
func badServerFieldErrors(err error) []string {
	var st kerrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil || len(st.Status().Details.Causes) == 0 {
		return []string{err.Error()}
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range st.Status().Details.Causes {
		l := c.Message
		if c.Field != "" {
			l = c.Field + ": " + c.Message
		}
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// deleteBadClaims deletes the claims the test created and waits, bounded,
// until they are gone.
func deleteBadClaims(t *testing.T, c client.Client, runs []*badClaimRun) {
	var created []*badClaimRun
	for _, r := range runs {
		if r.created {
			created = append(created, r)
		}
	}
	badParallel(created, badClaimsWorkers, func(r *badClaimRun) {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Delete(dctx, newClaim(badClaimsNamespace, r.claim.GetName())); err != nil && !kerrors.IsNotFound(err) {
			t.Logf("cannot delete claim %s: %v", r.claim.GetName(), err)
		}
	})
	deadline := time.Now().Add(2 * time.Minute)
	for {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(claimGVK.GroupVersion().WithKind(claimGVK.Kind + "List"))
		lctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := c.List(lctx, list, client.InNamespace(badClaimsNamespace))
		cancel()
		if err == nil && len(list.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var left []string
			for _, u := range list.Items {
				left = append(left, u.GetName())
			}
			sort.Strings(left)
			t.Logf("%d bad claims are still being deleted after 2m (err=%v): %s", len(left), err, badShorten(strings.Join(left, ", "), 1000))
			return
		}
		time.Sleep(time.Second)
	}
}

// badParallel calls f for every run with at most n calls at a time.
func badParallel(runs []*badClaimRun, n int, f func(*badClaimRun)) {
	work := make(chan *badClaimRun)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				f(r)
			}
		}()
	}
	for _, r := range runs {
		work <- r
	}
	close(work)
	wg.Wait()
}

func badShorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
}

func badOrNone(s string) string {
	if s == "" {
		return "(no Fatal result: it composes the claim)"
	}
	return s
}
