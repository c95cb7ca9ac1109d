// Package corpus generates MiniCluster claims for property tests: the
// repository's examples, and claims derived from them by seeded mutations
// aimed at what a field-by-field schema check misses (names derived from
// other names, collisions between containers, volumes and Services, label
// and annotation rules, Kubernetes' own limits, what Flux parses, scripts).
// Some mutations keep the claim valid, most make it subtly invalid.
//
// Claims are plain JSON-compatible trees (map[string]any, []any, string,
// int64, float64, bool, nil), so they can be written as YAML or JSON and
// sent to an API server unchanged. The same seed gives the same corpus.
//
// The package also reads field paths out of error messages and looks them
// up in a claim (FieldPaths, Lookup, PresentPath), so a test can check that
// a message names a field the user actually wrote.
package corpus

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The claim kind the examples hold.
const (
	APIVersion = "flux-framework.org/v1alpha2"
	Kind       = "MiniCluster"
)

// Claim is one MiniCluster claim of the corpus.
type Claim struct {
	// ID names the claim in reports: the example's directory for an
	// example, gen-<n> for a generated claim.
	ID string
	// Base is the example the claim derives from (a path relative to the
	// examples directory), or the claim's own file for an example.
	Base string
	// Mutations say what was changed in the base, in order; empty for an
	// example.
	Mutations []string
	// Object is the claim.
	Object map[string]any
}

// Describe is the claim's ID, base and mutations on one line.
func (c *Claim) Describe() string {
	if len(c.Mutations) == 0 {
		return fmt.Sprintf("%s (%s, unchanged)", c.ID, c.Base)
	}
	return fmt.Sprintf("%s (%s: %s)", c.ID, c.Base, strings.Join(c.Mutations, "; "))
}

// Kinds are the mutation names applied to the claim, without their details.
func (c *Claim) Kinds() []string {
	out := make([]string, 0, len(c.Mutations))
	for _, m := range c.Mutations {
		k, _, _ := strings.Cut(m, ":")
		out = append(out, k)
	}
	return out
}

// YAML is the claim as a YAML document.
func (c *Claim) YAML() ([]byte, error) { return yaml.Marshal(c.Object) }

// JSON is the claim as JSON.
func (c *Claim) JSON() ([]byte, error) { return json.Marshal(c.Object) }

// Copy returns a deep copy of the claim.
func (c *Claim) Copy() *Claim {
	out := *c
	out.Mutations = append([]string(nil), c.Mutations...)
	out.Object = DeepCopy(c.Object).(map[string]any)
	return &out
}

// LoadExamples reads every MiniCluster claim in the YAML files under dir
// (recursively), in path order. A file may hold several documents; only
// MiniCluster documents of flux-framework.org/v1alpha2 are claims.
func LoadExamples(dir string) ([]*Claim, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	var out []*Claim
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		docs, err := parseDocuments(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rel, _ := filepath.Rel(dir, f)
		rel = filepath.ToSlash(rel)
		for i, d := range docs {
			if d["apiVersion"] != APIVersion || d["kind"] != Kind {
				continue
			}
			id := filepath.ToSlash(filepath.Dir(rel))
			if base := strings.TrimSuffix(filepath.Base(rel), filepath.Ext(rel)); base != "claim" {
				id += "/" + base
			}
			if i > 0 {
				id += fmt.Sprintf("#%d", i)
			}
			out = append(out, &Claim{ID: id, Base: rel, Object: d})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no %s claims under %s", Kind, dir)
	}
	return out, nil
}

func parseDocuments(b []byte) ([]map[string]any, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var out []map[string]any
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, err
		}
		if len(m) > 0 {
			out = append(out, Normalize(m).(map[string]any))
		}
	}
}

// Normalize turns whole float64 numbers (as JSON decoding makes them) into
// int64, recursively, and returns the value.
func Normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = Normalize(e)
		}
		return v
	case []any:
		for i, e := range v {
			v[i] = Normalize(e)
		}
		return v
	case float64:
		if v == float64(int64(v)) && v >= -(1<<53) && v <= 1<<53 {
			return int64(v)
		}
		return v
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i
		}
		f, _ := v.Float64()
		return f
	default:
		return v
	}
}

// DeepCopy copies a JSON-compatible tree.
func DeepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = DeepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = DeepCopy(e)
		}
		return out
	default:
		return v
	}
}

// Options of Generate.
type Options struct {
	// Seed of the generator; the same seed and bases give the same corpus.
	Seed uint64
	// N is the number of claims to generate.
	N int
}

// Generate derives opts.N claims from bases. Claim i gets mutation
// Mutations()[i % len] first, so every mutation is exercised about equally,
// and then up to two more picked at random.
func Generate(bases []*Claim, opts Options) []*Claim {
	if len(bases) == 0 || opts.N <= 0 {
		return nil
	}
	g := &gen{r: rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))} //nolint:gosec // G404: claims reproducible from the seed, no secrets
	out := make([]*Claim, 0, opts.N)
	for i := 0; i < opts.N; i++ {
		base := bases[g.r.IntN(len(bases))]
		c := base.Copy()
		c.ID = fmt.Sprintf("gen-%04d", i)
		c.Base = base.ID
		ms := []mutation{catalogue[i%len(catalogue)]}
		if g.chance(0.45) {
			ms = append(ms, catalogue[g.r.IntN(len(catalogue))])
			if g.chance(0.3) {
				ms = append(ms, catalogue[g.r.IntN(len(catalogue))])
			}
		}
		for _, m := range ms {
			c.Mutations = append(c.Mutations, m.name+": "+m.apply(g, c.Object))
		}
		out = append(out, c)
	}
	return out
}

// Mutations are the names of every mutation Generate applies.
func Mutations() []string {
	out := make([]string, len(catalogue))
	for i, m := range catalogue {
		out[i] = m.name
	}
	return out
}
