package function

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/crossplane/function-sdk-go/errors"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
)

// errWaiting: Crossplane has not yet answered the function's requirements.
// It calls again at once with what was required and uses only that
// response, so nothing is reported.
var errWaiting = errors.New("waiting for Crossplane to answer the requirements")

// invalidError is a MiniCluster the function refuses to compose: a Fatal
// result, which keeps every composed resource as it is (a bad update never
// deletes a running cluster), and Valid=False with reason, which says on
// the claim what to do.
type invalidError struct {
	reason, msg string
}

func (e *invalidError) Error() string { return e.msg }

// invalid is a user's mistake (reason InvalidSpec).
func invalid(msg string) error { return &invalidError{reason: reasonInvalidSpec, msg: msg} }

// refused is what the platform's policy refuses (reason Policy): the claim
// asks for more than the platform allows, and the message names the
// policy key, the field and the fix.
func refused(msg string) error {
	if !strings.Contains(msg, "nothing was composed or changed") {
		msg += "; nothing was composed or changed"
	}
	return &invalidError{reason: ReasonPolicy, msg: msg}
}

// fail reports what stopped a composition run.
func fail(rsp *fnv1.RunFunctionResponse, err error) {
	if errors.Is(err, errWaiting) {
		return
	}
	response.Fatal(rsp, err)
	var inv *invalidError
	if errors.As(err, &inv) {
		response.ConditionFalse(rsp, ConditionValid, inv.reason).WithMessage(inv.msg).TargetCompositeAndClaim()
	}
}

// FormatErrors joins field errors into one message, each naming its field.
func FormatErrors(errs field.ErrorList) string {
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	return "invalid MiniCluster: " + strings.Join(msgs, "; ")
}
