package function

import (
	"context"
	"crypto/sha256"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/flux-framework/minicluster-crossplane/internal/schema"
)

// maxCheckedSpecs bounds the memory of specs known to satisfy the schema.
const maxCheckedSpecs = 4096

// specChecker evaluates the XRD's schema (OpenAPI and CEL, as the API server
// does) on composite resources, so the function tells the truth about a
// composite that never met an API server (crossplane composition render, a
// hand-made request). It costs about half a millisecond; a spec that passed
// once is remembered by its hash, so an unchanged MiniCluster is not checked
// again on every reconcile.
type specChecker struct {
	mu    sync.Mutex
	valid map[[sha256.Size]byte]struct{}
}

// check applies the schema's defaults to xr (the observed composite's
// content) and validates it. spec is the composite's spec as received.
func (c *specChecker) check(ctx context.Context, spec *structpb.Value, xr map[string]any) field.ErrorList {
	schema.Claims.Default(schema.Int64s(xr))
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(spec)
	key := sha256.Sum256(b)
	if err == nil {
		c.mu.Lock()
		_, ok := c.valid[key]
		c.mu.Unlock()
		if ok {
			return nil
		}
	}
	if errs := schema.Claims.Validate(ctx, xr); len(errs) > 0 {
		return errs
	}
	if err == nil {
		c.mu.Lock()
		if c.valid == nil || len(c.valid) >= maxCheckedSpecs {
			c.valid = make(map[[sha256.Size]byte]struct{})
		}
		c.valid[key] = struct{}{}
		c.mu.Unlock()
	}
	return nil
}
