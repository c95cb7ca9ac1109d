package schema

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// ValidateUpdate returns every schema and CEL error of an update of old to
// obj, transition rules (oldSelf) included, as the API server does: with
// validation ratcheting (errors of fields the update leaves unchanged are
// not reported) and with old's status in place of obj's (an update of the
// main resource cannot change status). Both must be of the same kind.
//
// As on the server, a failed rule on a string field quotes the new value:
// the immutability rule of spec.flux.curveCert repeats the certificate.
//
// It is for the tests: nothing in the module validates an update (the API
// server does, on a cluster). The tests use it to hold the XRD's transition
// rules (immutability, oldSelf) and ratcheting to their messages.
func (s *Schema) ValidateUpdate(ctx context.Context, obj, old map[string]any) field.ErrorList {
	c := s.forKind(obj)
	if c == nil {
		return s.kindError(obj)
	}
	if old["kind"] != obj["kind"] {
		return field.ErrorList{field.Invalid(field.NewPath("kind"), obj["kind"], fmt.Sprintf("field is immutable: the object is a %v", old["kind"]))}
	}
	obj = withStatus(obj, old, c)
	correlated := common.NewCorrelatedObject(obj, old, &model.Structural{Structural: c.structural})
	var errs field.ErrorList
	errs = append(errs, sorted(validation.ValidateCustomResourceUpdate(nil, obj, old, c.validator, validation.WithRatcheting(correlated)))...)
	errs = append(errs, c.validateScale(obj)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, obj, c.structural, false)...)
	if oldErrs := listtype.ValidateListSetsAndMaps(nil, c.structural, old); len(oldErrs) == 0 {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, c.structural, obj)...)
	}
	if blocked(errs) {
		return append(errs, field.Invalid(nil, nil, blockedMessage))
	}
	celErrs, _ := c.celUpdate().Validate(ctx, nil, c.structural, obj, old, celconfig.RuntimeCELCostBudget, cel.WithRatcheting(correlated))
	return append(errs, sorted(celErrs)...)
}

func TestValidateUpdate(t *testing.T) {
	old := withSpec(`  size: 4
  logging: {quiet: true}
  flux:
    bursting:
      leadBroker: {address: 10.0.0.1, name: root, size: 4}
  containers: [{image: rockylinux:9, command: echo hello world}]
`)
	cases := map[string]struct {
		reason string
		obj    string
		want   []string
	}{
		"Unchanged": {
			reason: "An update that changes nothing is valid.",
			obj:    old,
		},
		"Size": {
			reason: "size may change.",
			obj:    strings.Replace(old, "size: 4\n  logging", "size: 2\n  logging", 1),
		},
		"LeadBroker": {
			reason: "The burst controller may move the lead broker.",
			obj:    strings.Replace(old, "10.0.0.1", "10.0.0.2", 1),
		},
		"Containers": {
			reason: "The Job's pod template cannot change.",
			obj:    strings.Replace(old, "echo hello world", "echo goodbye", 1),
			want:   []string{"spec.containers: Invalid value: spec.containers is immutable once the MiniCluster exists (the Job's pod template cannot change): delete and re-create the MiniCluster to change it"},
		},
		"LoggingChanged": {
			reason: "A field's immutability rule names the field.",
			obj:    strings.Replace(old, "quiet: true", "quiet: false", 1),
			want:   []string{"spec.logging: Invalid value: spec.logging is immutable once the MiniCluster exists: delete and re-create the MiniCluster to change it"},
		},
		"LoggingRemoved": {
			reason: "Removing an optional field is refused by the rule on spec.",
			obj:    strings.Replace(old, "  logging: {quiet: true}\n", "", 1),
			want:   []string{"spec: Invalid value: spec.logging is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"},
		},
		"MaxSizeAdded": {
			reason: "maxSize cannot be added later.",
			obj:    old + "  maxSize: 8\n",
			want:   []string{"spec: Invalid value: spec.maxSize is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"},
		},
		"ConnectTimeoutAdded": {
			reason: "connectTimeout has no schema default (the platform's may apply), so the rule on spec.flux keeps it from being added later.",
			obj:    strings.Replace(old, "    bursting:\n", "    connectTimeout: 10s\n    bursting:\n", 1),
			want:   []string{"spec.flux: Invalid value: spec.flux.connectTimeout is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"},
		},
		"ResourcesAdded": {
			reason: "flux.resources cannot be added later: the brokers already run with their resource sets.",
			obj:    strings.Replace(old, "    bursting:\n", "    resources: node\n    bursting:\n", 1),
			want:   []string{"spec.flux: Invalid value: spec.flux.resources is immutable once the MiniCluster exists and cannot be added or removed: delete and re-create the MiniCluster to change it"},
		},
		"CrossplaneField": {
			reason: "Crossplane's own fields carry no immutability rule.",
			obj:    old + "  compositionRef: {name: other}\n",
		},
		"SizeZero": {
			reason: "A changed field is validated.",
			obj:    strings.Replace(old, "size: 4\n  logging", "size: 0\n  logging", 1),
			want:   []string{"spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"},
		},
		"StatusKept": {
			reason: "Status cannot change through the main resource: the old one is validated.",
			obj:    old + "status:\n  size: many\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := decode(t, old)
			Claims.Default(o)
			obj := decode(t, tc.obj)
			Claims.Default(obj)
			got := messages(Claims.ValidateUpdate(context.Background(), obj, o))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nValidateUpdate: -want, +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestValidateUpdateRatchets checks validation ratcheting (GA since
// Kubernetes 1.33): an error in a field the update leaves alone does not
// block the update.
func TestValidateUpdateRatchets(t *testing.T) {
	old := decode(t, withSpec("  size: 4\n  containers: [{image: rockylinux:9, name: Bad}]\n"))
	obj := decode(t, withSpec("  size: 2\n  containers: [{image: rockylinux:9, name: Bad}]\n"))
	if errs := Claims.Validate(context.Background(), obj); len(errs) == 0 {
		t.Fatal("the name is invalid on create")
	}
	if errs := Claims.ValidateUpdate(context.Background(), obj, old); len(errs) != 0 {
		t.Errorf("an unchanged invalid field blocks an update: %v", errs)
	}
}
