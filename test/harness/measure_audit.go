package harness

import (
	"bufio"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Audit logging of writes, to tell who writes what (Options.AuditWrites).

// auditPolicy logs every write at level Metadata (who, what, which object,
// the request URI with its fieldManager; no bodies) once, when its response
// is complete, and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
  - level: Metadata
    verbs: ["create", "update", "patch", "delete", "deletecollection"]
  - level: None
`

// auditArgs are kube-apiserver's flags for Options.AuditWrites: a policy
// file and a JSON log in LogDir, written as requests complete.
func (cp *ControlPlane) auditArgs() ([]string, error) {
	if !cp.opts.AuditWrites {
		return nil, nil
	}
	policy := filepath.Join(cp.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + cp.AuditLogPath(),
		"--audit-log-format=json",
		"--audit-log-mode=blocking",
		"--audit-log-maxsize=0",
	}, nil
}

// AuditLogPath is kube-apiserver's audit log (Options.AuditWrites).
func (cp *ControlPlane) AuditLogPath() string { return filepath.Join(cp.LogDir, "audit.log") }

// AuditWrite is one write the API server answered, from its audit log.
type AuditWrite struct {
	Time time.Time
	// User is the authenticated user: "crossplane", "system:kube-controller-manager"
	// or "admin" (the test) here; UserAgent is what the client said.
	User, UserAgent string
	// Verb is the API verb: create, update, patch, delete.
	Verb string
	// Group, Resource and Subresource name the kind written ("" group is core).
	Group, Resource, Subresource string
	Namespace, Name              string
	// FieldManager and DryRun are the request's query parameters.
	FieldManager string
	DryRun       bool
	// Code is the response's HTTP status code.
	Code int
}

// Writer says who wrote: the component, from the user, and for Crossplane
// which of its controllers, from the field manager and the resource.
func (w AuditWrite) Writer() string {
	switch w.User {
	case "crossplane":
		switch {
		case strings.HasPrefix(w.FieldManager, "apiextensions.crossplane.io/composed"):
			return "crossplane/composite (composed apply)"
		case w.Resource == "events":
			return "crossplane (events)"
		}
		return "crossplane"
	case "system:kube-controller-manager":
		return "kube-controller-manager"
	case "admin":
		return "test"
	}
	return w.User
}

// AuditWrites reads the writes in the audit log that completed in [from, to).
func (cp *ControlPlane) AuditWrites(_ context.Context, from, to time.Time) ([]AuditWrite, error) {
	return ReadAuditWrites(cp.AuditLogPath(), from, to)
}

// ReadAuditWrites reads the writes of a JSON audit log that completed in
// [from, to); a zero to means no end.
func ReadAuditWrites(path string, from, to time.Time) ([]AuditWrite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only
	var out []AuditWrite
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		var ev struct {
			Stage      string `json:"stage"`
			Verb       string `json:"verb"`
			RequestURI string `json:"requestURI"`
			UserAgent  string `json:"userAgent"`
			User       struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef struct {
				Resource, Namespace, Name, APIGroup, Subresource string
			} `json:"objectRef"`
			ResponseStatus struct {
				Code int `json:"code"`
			} `json:"responseStatus"`
			StageTimestamp time.Time `json:"stageTimestamp"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			// The last line may still be being written.
			continue
		}
		if ev.Stage != "ResponseComplete" || ev.StageTimestamp.Before(from) || (!to.IsZero() && !ev.StageTimestamp.Before(to)) {
			continue
		}
		w := AuditWrite{
			Time: ev.StageTimestamp, User: ev.User.Username, UserAgent: ev.UserAgent, Verb: ev.Verb,
			Group: ev.ObjectRef.APIGroup, Resource: ev.ObjectRef.Resource, Subresource: ev.ObjectRef.Subresource,
			Namespace: ev.ObjectRef.Namespace, Name: ev.ObjectRef.Name, Code: ev.ResponseStatus.Code,
		}
		if u, err := url.Parse(ev.RequestURI); err == nil {
			q := u.Query()
			w.FieldManager = q.Get("fieldManager")
			w.DryRun = q.Has("dryRun")
		}
		out = append(out, w)
	}
	return out, sc.Err()
}
