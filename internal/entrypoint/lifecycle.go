package entrypoint

// JobFailedExitCode is what the lead broker's runner exits with when the
// job (the initial program of flux start) fails. The Job's podFailurePolicy
// turns exactly this code into a failed MiniCluster, so any other exit of a
// runner (a crashed broker, an OOM kill, a failing hook under strict mode)
// is retried instead. The job's own exit code goes to the pod's termination
// message.
const JobFailedExitCode = 42
