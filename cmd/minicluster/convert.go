package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/flux-framework/minicluster-crossplane/apis/input/v1beta1"
	"github.com/flux-framework/minicluster-crossplane/function"
	"github.com/flux-framework/minicluster-crossplane/internal/convert"
	"github.com/flux-framework/minicluster-crossplane/internal/driver"
)

// ConvertCmd converts Flux Operator v1alpha1 MiniClusters to v1alpha2 claims.
type ConvertCmd struct {
	Files []string `help:"Flux Operator v1alpha1 MiniCluster YAML ('-' for stdin); may be given more than once. Multi-document streams and Lists are read; other objects are written out unchanged." required:"" short:"f" name:"file"`
}

// Run converts the files to stdout, with a line on stderr for every
// v1alpha1 field that has no v1alpha2 field.
func (c *ConvertCmd) Run() error {
	return convertFiles(c.Files, os.Stdin, os.Stdout, os.Stderr)
}

// convertFiles converts every file (or stdin for "-") and writes the
// claims to stdout and the notes to stderr, or nothing to stdout when a
// file cannot be converted: a claim the API server or the function would
// refuse is an error.
func convertFiles(files []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var out bytes.Buffer
	var notes []string
	for _, f := range files {
		var b []byte
		var err error
		if f == "-" {
			if b, err = io.ReadAll(stdin); err != nil {
				return fmt.Errorf("cannot read stdin: %w", err)
			}
		} else if b, err = readFile(f); err != nil {
			return err
		}
		name := f
		if f == "-" {
			name = "<stdin>"
		}
		if err := warnDuplicates(stderr, name+": ", b); err != nil {
			return err
		}
		res, err := convert.Stream(bytes.NewReader(b), convert.Options{Check: checkClaim})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		for _, n := range res.Notes {
			notes = append(notes, name+": "+n)
		}
		if res.Converted == 0 {
			notes = append(notes, fmt.Sprintf("%s: no %s MiniCluster: written out unchanged", name, convert.V1alpha1))
		}
		if out.Len() > 0 && len(res.YAML) > 0 {
			out.WriteString("---\n")
		}
		out.Write(res.YAML)
	}
	for _, n := range notes {
		if _, err := fmt.Fprintln(stderr, n); err != nil {
			return err
		}
	}
	_, err := stdout.Write(out.Bytes())
	return err
}

// permissiveInput is the function input of a platform whose policy allows
// what the Flux Operator allowed (v1beta1.PermissivePolicy).
var permissiveInput = func() []byte {
	b, err := yaml.Marshal(v1beta1.Input{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.SchemeGroupVersion.String(), Kind: "Input"},
		Policy:   v1beta1.PermissivePolicy(),
	})
	if err != nil {
		panic(err)
	}
	return b
}()

// checkClaim does to a converted claim what would happen to it on a
// cluster: the API server's checks (schema, CEL), then the function,
// in-process. The platform's policy is not the claim's to fix: the claim
// is checked under a policy that allows what the Flux Operator allowed,
// and what the default policy would refuse until the platform provides it
// (labels on the namespace, Secrets, a ServiceAccount, or a policy
// allowing more) comes back as a note, with the function's warnings.
func checkClaim(claim []byte) ([]string, error) {
	out, err := driver.Run(context.Background(), function.New(), driver.Options{Claim: claim, Input: permissiveInput})
	if err != nil {
		return nil, err
	}
	if out.Invalid != nil {
		return nil, out.Invalid
	}
	var fatal, warnings []string
	for _, r := range out.Results {
		switch {
		case strings.HasPrefix(r, "FATAL: "):
			fatal = append(fatal, strings.TrimPrefix(r, "FATAL: "))
		case strings.HasPrefix(r, "WARNING: "):
			warnings = append(warnings, "the function warns: "+strings.TrimPrefix(r, "WARNING: "))
		}
	}
	if out.Fatal {
		return nil, errors.New("the function refuses it: " + strings.Join(fatal, "; "))
	}
	def, err := driver.Run(context.Background(), function.New(), driver.Options{Claim: claim})
	if err != nil {
		return nil, err
	}
	if def.Fatal {
		for _, r := range def.Results {
			if m, ok := strings.CutPrefix(r, "FATAL: "); ok {
				warnings = append(warnings, "the default policy refuses it in a namespace without labels until the platform team allows it (as examples/*/cluster.yaml do): "+m)
			}
		}
	}
	return warnings, nil
}
