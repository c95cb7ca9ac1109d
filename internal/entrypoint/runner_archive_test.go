package entrypoint

// archive.path: the content archive every broker restores and the lead
// dumps (see DumpsArchive).

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// TestRunnerArchive: an archive that exists is restored by every broker; the
// lead dumps to it at shutdown when flux dump can write its format.
func TestRunnerArchive(t *testing.T) {
	t.Parallel()
	runCases(t, map[string]runCase{
		"ArchivePresent": {
			reason:  "An existing archive.path is restored with -Scontent.restore after the other options; the lead dumps to it with -Scontent.dump when it shuts down.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "archive.tar")
				_ = os.WriteFile(mc.Spec.Archive.Path, []byte("x"), 0o644)
			},
			want: func(mp string) [][]string {
				archive := filepath.Join(filepath.Dir(mp), "archive.tar")
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.restore="+archive, "-Scontent.dump="+archive), submit(hello...))...)}
			},
		},
		"ArchiveDumpCreatesDirectory": {
			reason:  "The first run has no archive to restore, but the lead dumps one at shutdown into a directory it creates.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "state/flux/archive.tar.gz")
			},
			want: func(mp string) [][]string {
				archive := filepath.Join(filepath.Dir(mp), "state/flux/archive.tar.gz")
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.dump="+archive), submit(hello...))...)}
			},
			check: func(t *testing.T, sb *sandbox, _ result) {
				t.Helper()
				if st, err := os.Stat(filepath.Join(sb.root, "state/flux")); err != nil || !st.IsDir() {
					t.Errorf("the archive's directory must exist for the dump: %v", err)
				}
			},
		},
		"ArchiveInteractive": {
			reason:  "An interactive lead dumps too, when flux shutdown ends it.",
			command: "",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Interactive = true
				mc.Spec.Archive.Path = filepath.Join(sb.root, "archive.tar")
			},
			want: func(mp string) [][]string {
				o := std()
				o.rc2none = true
				return [][]string{encode(), append(broker(mp, o), "-Scontent.dump="+filepath.Join(filepath.Dir(mp), "archive.tar"))}
			},
		},
		"ArchivePresentWorker": {
			reason:  "Every broker restores the archive; only the lead dumps it.",
			command: "echo hello world",
			host:    workHost,
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "archive.tar")
				_ = os.WriteFile(mc.Spec.Archive.Path, []byte("x"), 0o644)
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, "-Scontent.restore="+filepath.Join(filepath.Dir(mp), "archive.tar"))}
			},
		},
		"ArchiveRestoreOnly": {
			reason:  "An archive flux dump cannot write (the operator's archive.sqlite) is restored when it exists, never dumped to: the dump would fail the shutdown.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "archive.sqlite")
				_ = os.WriteFile(mc.Spec.Archive.Path, []byte("x"), 0o644)
			},
			want: func(mp string) [][]string {
				archive := filepath.Join(filepath.Dir(mp), "archive.sqlite")
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.restore="+archive), submit(hello...))...)}
			},
		},
		"ArchiveMissing": {
			reason:  "A missing archive is not restored, only dumped to.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "nope.tar")
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, cat(words("-Scontent.dump="+filepath.Join(filepath.Dir(mp), "nope.tar")), submit(hello...))...)}
			},
		},
		"ArchiveIsDirectory": {
			reason:  "An archive.path that is a directory (/tmp, a volume) is no archive: restoring it would stop the lead broker.",
			command: "echo hello world",
			mutate: func(mc *v1alpha2.MiniCluster, sb *sandbox) {
				mc.Spec.Archive.Path = filepath.Join(sb.root, "state")
				mustMkdir(t, mc.Spec.Archive.Path)
			},
			want: func(mp string) [][]string {
				return [][]string{encode(), start(mp, std(), nil, submit(hello...)...)}
			},
		},
	})
}
