package burst

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// Reasons of a Burst's Ready condition while it waits for something it
// cannot do itself. Waiting is normal (the root's pods are not scheduled
// yet, its NodePort not allocated yet), so it is a condition, not an error:
// Synced stays True and no warning event repeats on every poll.
const (
	// ReasonWaitingForRoot: the root MiniCluster has not composed or
	// scheduled what the burst cluster needs (the lead broker Service and
	// its NodePort, a scheduled lead pod with a node address, the CURVE
	// certificate Secret).
	ReasonWaitingForRoot xpv2.ConditionReason = "WaitingForRoot"
	// ReasonTargetLacksAPI: the target cluster does not serve the
	// MiniCluster API, so there is nothing to create the burst cluster
	// with until Crossplane and the MiniCluster Configuration are
	// installed there.
	ReasonTargetLacksAPI xpv2.ConditionReason = "TargetLacksMiniClusterAPI"
)

// waitPoll is how soon a waiting Burst looks again: the lead's pod and
// NodePort usually appear within seconds, well before the poll interval.
const waitPoll = 5 * time.Second

// waiting is a state the Burst reports and waits out.
type waiting struct {
	reason xpv2.ConditionReason
	msg    string
}

func (w *waiting) Error() string { return w.msg }

func waitFor(reason xpv2.ConditionReason, format string, args ...any) error {
	return &waiting{reason: reason, msg: fmt.Sprintf(format, args...)}
}

// condition is the Ready condition that says what the Burst waits for.
func (w *waiting) condition() xpv2.Condition {
	return xpv2.Condition{
		Type:               xpv2.TypeReady,
		Status:             corev1.ConditionFalse,
		LastTransitionTime: metav1.Now(),
		Reason:             w.reason,
		Message:            w.msg,
	}
}

// isWaiting tells whether mg's Ready condition says it waits.
func isWaiting(mg resource.Managed) bool {
	switch mg.GetCondition(xpv2.TypeReady).Reason {
	case ReasonWaitingForRoot, ReasonTargetLacksAPI:
		return true
	}
	return false
}

// pollInterval looks again sooner while a Burst waits.
func pollInterval(mg resource.Managed, poll time.Duration) time.Duration {
	if isWaiting(mg) {
		return min(poll, waitPoll)
	}
	return poll
}
