package v1alpha2

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// troubleshooting is the page whose tables say what each condition and
// reason means and what to do.
const troubleshooting = "../../../docs/troubleshooting.md"

// crossplaneConditions are the condition types Crossplane writes on the
// MiniCluster; the Conditions table explains them too.
var crossplaneConditions = []string{"Synced", "Ready", "Responsive"}

// kubernetesReasons are the Kubernetes reasons of a pod that does not come
// up which the Brokers condition carries as Kubernetes gives them and the
// table of "Brokers that do not come up" explains. A reason of that table
// is one of these or one of Brokers' own (ConditionReasons).
var kubernetesReasons = []string{
	"ErrImagePull", "ErrImageNeverPull", "Init:ErrImagePull", "Unschedulable", "Init:Error",
	"Error", "OOMKilled", "CrashLoopBackOff", "CreateContainerConfigError",
}

// TestConditionsDocumented holds docs/troubleshooting.md's tables to
// ConditionReasons: the Conditions table has a row for each condition type
// the function sets (and no other), and each condition's reasons as the
// tables name them (the Conditions table's "reason `X`", the first table's
// "`Type Status Reason`" and, for Brokers, the first column of "Brokers
// that do not come up") are exactly its reasons in the list.
func TestConditionsDocumented(t *testing.T) {
	b, err := os.ReadFile(troubleshooting)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	want := ConditionReasons()
	named := map[ConditionType]map[ConditionReason]bool{}
	name := func(typ ConditionType, r ConditionReason, where string) {
		if _, ok := want[typ]; !ok {
			t.Errorf("%s: %s names reason %s of condition %s, which v1alpha2.ConditionReasons does not list", troubleshooting, where, r, typ)
			return
		}
		if named[typ] == nil {
			named[typ] = map[ConditionReason]bool{}
		}
		named[typ][r] = true
	}

	// ## Conditions: a row per condition, set by the function or by
	// Crossplane.
	rows := table(t, doc, "## Conditions")
	var types []string
	for _, row := range rows {
		if len(row) != 4 {
			t.Fatalf("%s: ## Conditions: row %q has %d columns, want 4 (condition, set by, True, False)", troubleshooting, row, len(row))
		}
		typ := strings.Trim(row[0], "`")
		switch setBy := row[1]; {
		case setBy == "the function":
			types = append(types, typ)
			for _, r := range reasonsIn(row[2] + " " + row[3]) {
				name(ConditionType(typ), ConditionReason(r), "## Conditions")
			}
		case strings.HasPrefix(setBy, "Crossplane"):
			if !slices.Contains(crossplaneConditions, typ) {
				t.Errorf("%s: ## Conditions: %s is set by %q: neither the function's (v1alpha2.ConditionReasons) nor one of Crossplane's %v", troubleshooting, typ, setBy, crossplaneConditions)
			}
		default:
			t.Errorf("%s: ## Conditions: %s is set by %q, want \"the function\" or Crossplane", troubleshooting, typ, setBy)
		}
	}
	if got, w := sorted(types), sorted(keys(want)); !slices.Equal(got, w) {
		t.Errorf("%s: ## Conditions: the function sets %v, v1alpha2.ConditionReasons lists %v", troubleshooting, got, w)
	}

	// ## Start with the MiniCluster's own words: "`Type Status Reason`"
	// (or "`Type Status <reason>`"), then perhaps "or `Reason`".
	first := regexp.MustCompile("^`(\\w+) (True|False|Unknown)(?: ([^`]+))?`((?: or `\\w+`)*)")
	for _, row := range table(t, doc, "## Start with the MiniCluster's own words") {
		m := first.FindStringSubmatch(row[0])
		if m == nil {
			continue // a row that is not a condition ("nothing new: ...")
		}
		typ := ConditionType(m[1])
		if slices.Contains(crossplaneConditions, m[1]) {
			continue
		}
		reasons := regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(m[4], -1)
		if m[3] != "" && m[3] != "<reason>" {
			reasons = append(reasons, []string{"", m[3]})
		}
		if _, ok := want[typ]; !ok {
			t.Errorf("%s: ## Start with the MiniCluster's own words names condition %s, which v1alpha2.ConditionReasons does not list", troubleshooting, typ)
			continue
		}
		for _, r := range reasons {
			name(typ, ConditionReason(r[1]), "## Start with the MiniCluster's own words")
		}
	}

	// ## Brokers that do not come up: the reasons, each Brokers' own or
	// Kubernetes'.
	for _, row := range table(t, doc, "## Brokers that do not come up") {
		for _, m := range regexp.MustCompile("`([A-Za-z:]+)`").FindAllStringSubmatch(row[0], -1) {
			if r := ConditionReason(m[1]); slices.Contains(want[ConditionBrokers], r) {
				name(ConditionBrokers, r, "## Brokers that do not come up")
			} else if !slices.Contains(kubernetesReasons, m[1]) {
				t.Errorf("%s: ## Brokers that do not come up names reason %s: neither Brokers' own (v1alpha2.ConditionReasons) nor a Kubernetes reason this test knows (kubernetesReasons)", troubleshooting, m[1])
			}
		}
	}

	for typ, reasons := range want {
		var got, w []string
		for r := range named[typ] {
			got = append(got, string(r))
		}
		for _, r := range reasons {
			w = append(w, string(r))
		}
		if got, w = sorted(got), sorted(w); !slices.Equal(got, w) {
			t.Errorf("%s: the tables name the reasons %v of %s, v1alpha2.ConditionReasons lists %v", troubleshooting, got, typ, w)
		}
	}
}

// TestConditionReasonsComplete: every condition type and reason this
// package declares is in ConditionReasons, which the docs are held to.
func TestConditionReasonsComplete(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "conditions.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for typ, reasons := range ConditionReasons() {
		listed["ConditionType "+string(typ)] = true
		for _, r := range reasons {
			listed["ConditionReason "+string(r)] = true
		}
	}
	declared := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			id, ok := vs.Type.(*ast.Ident)
			if !ok || (id.Name != "ConditionType" && id.Name != "ConditionReason") {
				t.Errorf("conditions.go: constant %s is not typed ConditionType or ConditionReason", vs.Names[0])
				continue
			}
			for i, n := range vs.Names {
				declared++
				v := constString(t, vs.Values[i])
				if !listed[id.Name+" "+v] {
					t.Errorf("conditions.go: %s (%s %q) is not in ConditionReasons", n, id.Name, v)
				}
			}
		}
	}
	if declared == 0 {
		t.Fatal("conditions.go declares no constants")
	}
}

// constString is the value of a constant of conditions.go: a string
// literal, or one of this package's phases.
func constString(t *testing.T, e ast.Expr) string {
	t.Helper()
	switch e := e.(type) {
	case *ast.BasicLit:
		v, err := strconv.Unquote(e.Value)
		if err != nil {
			t.Fatal(err)
		}
		return v
	case *ast.Ident:
		if v, ok := map[string]string{
			"PhasePending": PhasePending, "PhaseQueued": PhaseQueued, "PhaseRunning": PhaseRunning,
			"PhaseSucceeded": PhaseSucceeded, "PhaseFailed": PhaseFailed,
		}[e.Name]; ok {
			return v
		}
	}
	t.Fatalf("conditions.go: a constant's value %#v is neither a string nor a phase", e)
	return ""
}

// table is the first Markdown table under heading (the line that starts
// with it), one []string of trimmed cells a row, the header and its rule
// left out.
func table(t *testing.T, doc, heading string) [][]string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading)
	if i < 0 {
		t.Fatalf("%s: no heading %q", troubleshooting, heading)
	}
	var rows [][]string
	inTable := false
	for _, line := range strings.Split(doc[i+1:], "\n")[1:] {
		if strings.HasPrefix(line, "#") {
			break
		}
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), " | ") {
			cells = append(cells, strings.TrimSpace(c))
		}
		rows = append(rows, cells)
	}
	if len(rows) < 3 {
		t.Fatalf("%s: no table under %q", troubleshooting, heading)
	}
	return rows[2:]
}

// reasonsIn are the reasons a Conditions table cell names: "reason `A`",
// "Reason `A` or `B`", "reason `A`, `B` or `C`".
func reasonsIn(cell string) []string {
	var out []string
	for _, run := range regexp.MustCompile("[Rr]eason `\\w+`(?:(?:, | or )`\\w+`)*").FindAllString(cell, -1) {
		for _, m := range regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(run, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

func keys(m map[ConditionType][]ConditionReason) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, string(k))
	}
	return out
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}
