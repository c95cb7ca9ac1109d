package v1alpha2

// ConditionType is the type of a condition a MiniCluster reports in
// status.conditions, next to Crossplane's own (Synced, Ready, Responsive).
type ConditionType string

// ConditionReason is the reason of a condition a MiniCluster reports.
type ConditionReason string

// Condition types the MiniCluster reports: the function writes them on the
// composite and its claim. docs/troubleshooting.md's tables name each of
// them, and the test of this package holds those tables to
// ConditionReasons.
const (
	// ConditionValid is False while the MiniCluster has an error the
	// function refuses to compose: its reason says which kind, its message
	// names the field or the object and the fix.
	ConditionValid ConditionType = "Valid"
	// ConditionBrokers says how many brokers are up and, while some are
	// not, why not: the pod, the Kubernetes reason and its message. It is a
	// condition of the MiniCluster's own because Crossplane reserves Ready:
	// it drops a Ready condition a function returns, and writes its own
	// without a message.
	ConditionBrokers ConditionType = "Brokers"
	// ConditionFinished says how the cluster ended: True once its Job has
	// succeeded (reason Succeeded) or failed (reason Failed), with a
	// message that carries the Job's own reason and message; False (reason:
	// the phase) while it has not.
	ConditionFinished ConditionType = "Finished"
	// ConditionScaled is False while the MiniCluster runs another size than
	// spec.size asks for.
	ConditionScaled ConditionType = "Scaled"
)

// Reasons of Valid.
const (
	// ReasonValid: the MiniCluster passed every check and was composed
	// (Valid=True).
	ReasonValid ConditionReason = "Valid"
	// ReasonInvalidSpec: the MiniCluster cannot run as it is (a field the
	// function refuses, or the namespace's own Pod Security label refuses
	// its pods).
	ReasonInvalidSpec ConditionReason = "InvalidSpec"
	// ReasonPolicy: the platform's policy refuses what the MiniCluster
	// asks for.
	ReasonPolicy ConditionReason = "Policy"
	// ReasonForeignObject: Crossplane observes objects that are not this
	// MiniCluster's.
	ReasonForeignObject ConditionReason = "ForeignObject"
	// ReasonUnclaimed: a claim-shape composite no claim made.
	ReasonUnclaimed ConditionReason = "Unclaimed"
	// ReasonNameTaken: an object of a name the MiniCluster composes exists
	// and is not its own.
	ReasonNameTaken ConditionReason = "NameTaken"
	// ReasonJobExists: ReasonNameTaken for the Job (typically the Flux
	// Operator's, after a migration).
	ReasonJobExists ConditionReason = "JobExists"
	// ReasonGangUnavailable: the Composition requires gang scheduling
	// (scheduling.gang: Required) and the cluster does not serve it.
	ReasonGangUnavailable ConditionReason = "GangSchedulingUnavailable"
)

// Reasons of Brokers besides the Kubernetes reasons of a pod that does not
// come up (ErrImagePull, Unschedulable, CrashLoopBackOff, ...), which it
// carries as Kubernetes gives them.
const (
	// ReasonBrokersUp: the Job has its quorum of ready brokers
	// (Brokers=True).
	ReasonBrokersUp ConditionReason = "Up"
	// ReasonBrokersStarting: the brokers are on their way up.
	ReasonBrokersStarting ConditionReason = "Starting"
	// ReasonBrokersFinished: the cluster has finished (see Finished).
	ReasonBrokersFinished ConditionReason = "Finished"
	// ReasonFailedCreate: the Job cannot create its pods (the job
	// controller's event reason).
	ReasonFailedCreate ConditionReason = "FailedCreate"
	// ReasonQueued: the Job waits for Kueue to admit it (also Finished's
	// reason in the phase Queued).
	ReasonQueued ConditionReason = PhaseQueued
)

// Reasons of Finished: the phase.
const (
	ReasonPending   ConditionReason = PhasePending
	ReasonRunning   ConditionReason = PhaseRunning
	ReasonSucceeded ConditionReason = PhaseSucceeded
	ReasonFailed    ConditionReason = PhaseFailed
)

// Reasons of Scaled.
const (
	// ReasonAvailable: the MiniCluster runs the size spec.size asks for
	// (Scaled=True).
	ReasonAvailable ConditionReason = "Available"
	// ReasonSizeAboveMaximum: spec.size exceeds the maximum size.
	ReasonSizeAboveMaximum ConditionReason = "SizeAboveMaximum"
	// ReasonAdmittedByKueue: Kueue admitted the Job with the pods it runs;
	// another size is not applied while it runs.
	ReasonAdmittedByKueue ConditionReason = "AdmittedByKueue"
)

// ConditionReasons are the condition types the MiniCluster reports, each
// with every reason of its own it carries (Brokers also carries the
// Kubernetes reasons of its pods). docs/troubleshooting.md's tables name
// exactly these.
func ConditionReasons() map[ConditionType][]ConditionReason {
	return map[ConditionType][]ConditionReason{
		ConditionValid: {ReasonValid, ReasonInvalidSpec, ReasonPolicy, ReasonForeignObject, ReasonUnclaimed,
			ReasonNameTaken, ReasonJobExists, ReasonGangUnavailable},
		ConditionBrokers:  {ReasonBrokersUp, ReasonBrokersStarting, ReasonBrokersFinished, ReasonFailedCreate, ReasonQueued},
		ConditionFinished: {ReasonPending, ReasonQueued, ReasonRunning, ReasonSucceeded, ReasonFailed},
		ConditionScaled:   {ReasonAvailable, ReasonSizeAboveMaximum, ReasonAdmittedByKueue},
	}
}
