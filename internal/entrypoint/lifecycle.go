package entrypoint

import "strings"

// JobFailedExitCode is what a runner exits with when the MiniCluster must
// end Failed: the lead's job (the initial program of flux start) failed, or
// the lead ended badly after its instance had run (a failing hook under
// strict mode, a signal), or a runner can never start (no flux, no
// /usr/bin/time for logging.timed). The Job's podFailurePolicy turns exactly
// this code into a failed MiniCluster, so other exits of a runner (a
// follower's broker that crashed, a signal to a follower) are retried
// instead. The reason, with the job's own exit code, goes to the pod's
// termination message (see LeadMessagePrefix).
const JobFailedExitCode = 42

// DumpExtensions are the archive formats flux dump writes, chosen by the
// file's extension (libarchive's archive_write_set_format_filter_by_ext).
var DumpExtensions = []string{".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz", ".tar.zst"}

// DumpsArchive tells whether the lead broker saves the content archive at
// path when the cluster shuts down (-Scontent.dump): only when flux dump
// can write that format. Any other path (the Flux Operator's examples use
// archive.sqlite) is only restored from, as the operator did; dumping to it
// would fail the shutdown and with it the job.
func DumpsArchive(path string) bool {
	for _, ext := range DumpExtensions {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}
