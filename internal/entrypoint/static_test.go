package entrypoint

// Every generated script, for claims covering every mode and switch, is
// valid bash and clean under shellcheck.

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// shellcheckExclude are the checks that flag intended code:
//
//	SC2016  "Expressions don't expand in single quotes": the generator
//	        writes helper files (flux-view.sh, flux-connect.sh,
//	        flux-job.batch, custom scripts) with printf '%s' '<text>', and
//	        that text holds $PATH, ${FLUX_OUTPUT_DIR}, ... for the file to
//	        expand later, not the writer.
//	SC1003  "Want to escape a single quote?": a value with ' and \ in a
//	        file written that way is quoted twice (once for the file, once
//	        for printf's argument), which is correct ('\'' inside '...')
//	        but trips this heuristic; only hostile values trigger it.
var shellcheckExclude = []string{"SC2016", "SC1003"}

// staticClaims cover every mode and switch of reference §3.
func staticClaims() map[string]struct {
	reason string
	mc     *v1alpha2.MiniCluster
} {
	type c = struct {
		reason string
		mc     *v1alpha2.MiniCluster
	}
	run := func(f func(*v1alpha2.MiniCluster)) func(*v1alpha2.MiniCluster) { return f }
	container := func(f func(*v1alpha2.MiniClusterContainer)) func(*v1alpha2.MiniCluster) {
		return func(mc *v1alpha2.MiniCluster) { f(&mc.Spec.Containers[0]) }
	}
	sidecars := func(mc *v1alpha2.MiniCluster) {
		mc.Spec.Containers = append(mc.Spec.Containers,
			v1alpha2.MiniClusterContainer{Name: "waits", Command: `flux proxy "${fluxsocket}" flux jobs -a | tee /tmp/jobs`,
				Commands: v1alpha2.Commands{Init: "echo init", ServicePre: "echo pre", Post: "echo post"}},
			v1alpha2.MiniClusterContainer{Name: "script", Commands: v1alpha2.Commands{Script: "#!/bin/bash\necho \"$fluxsocket\"\n"}},
			v1alpha2.MiniClusterContainer{Name: "empty"},
		)
	}
	hooks := container(func(c *v1alpha2.MiniClusterContainer) {
		c.Commands = v1alpha2.Commands{Init: "echo init", Pre: "export FOO=bar\necho pre", BrokerPre: "echo broker", WorkerPre: "echo worker",
			Post: "echo post", Prefix: "mpirun -x FOO", ServicePre: "echo ignored"}
	})
	return map[string]c{
		"DefaultSubmit":    {"A default hello-world claim.", claim(4, "echo hello world")},
		"SizeOne":          {"Size 1.", claim(1, "echo hello world")},
		"SubmitCommand":    {"A custom submit command.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.SubmitCommand = "flux mini submit" }))},
		"OptionFlags":      {"optionFlags.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.OptionFlags = "-ompi=openmpi@5 -c 1" }))},
		"Commas":           {"Commas in the command, prefix and optionFlags.", claim(4, "flux run --setattr=a,b echo a,b", container(func(c *v1alpha2.MiniClusterContainer) { c.Commands.Prefix = "env A=1,2" }), run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.OptionFlags = "--setattr=x,y" }))},
		"TasksZero":        {"tasks 0.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Tasks = ptrTo(int32(0)) }))},
		"TasksAtLeastSize": {"tasks >= size.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Tasks = ptrTo(int32(8)) }))},
		"TasksBelowSize":   {"tasks < size.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Tasks = ptrTo(int32(2)) }))},
		"Launcher":         {"Launcher mode.", claim(4, "echo hi", container(func(c *v1alpha2.MiniClusterContainer) { c.Launcher = true }))},
		"Batch":            {"Batch mode.", claim(4, "echo one\n\necho two", container(func(c *v1alpha2.MiniClusterContainer) { c.Batch = true }))},
		"BatchQuiet":       {"Quiet batch mode.", claim(4, "echo one", container(func(c *v1alpha2.MiniClusterContainer) { c.Batch = true }), run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Quiet = true }))},
		"BatchRaw":         {"batchRaw.", claim(4, "flux submit hostname\nflux queue idle", container(func(c *v1alpha2.MiniClusterContainer) { c.Batch, c.BatchRaw = true, true }))},
		"BatchRawHeredoc":  {"batchRaw with apostrophes in a comment and a heredoc.", claim(4, "# don't\ncat <<'EOF'\nit's\n\nEOF\nflux submit hostname", container(func(c *v1alpha2.MiniClusterContainer) { c.Batch, c.BatchRaw = true, true }))},
		"BatchScript":      {"batch with commands.script as the batch script.", claim(4, "", container(func(c *v1alpha2.MiniClusterContainer) { c.Batch, c.Commands.Script = true, "flux submit hostname\n" }))},
		"TimedInit":        {"logging.timed with commands.init.", claim(4, "echo hi", container(func(c *v1alpha2.MiniClusterContainer) { c.Commands.Init = "apt-get install -y time" }), run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Timed = true }))},
		"ArchiveInteractive": {"archive.path on an interactive cluster.", claim(4, "", run(func(mc *v1alpha2.MiniCluster) {
			mc.Spec.Interactive = true
			mc.Spec.Archive.Path = "/state/archive.tar.gz"
		}))},
		"LogsDir":           {"A logs directory.", claim(4, "echo hi", container(func(c *v1alpha2.MiniClusterContainer) { c.Logs = "/data/my logs" }))},
		"Interactive":       {"interactive with no command.", claim(4, "", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Interactive = true }))},
		"InteractiveCmd":    {"interactive with a command.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Interactive = true }))},
		"EmptyCommand":      {"No command.", claim(4, "")},
		"CommandsScript":    {"commands.script.", claim(4, "echo hi", container(func(c *v1alpha2.MiniClusterContainer) { c.Commands.Script = "#!/bin/bash\necho $HOME\n" }))},
		"Hooks":             {"Every hook and the prefix.", claim(4, "echo hi", hooks)},
		"HooksQuiet":        {"Every hook, quiet.", claim(4, "echo hi", hooks, run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Quiet = true }))},
		"Wrap":              {"flux.wrap.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Wrap = "strace,-f" }))},
		"Quiet":             {"logging.quiet.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Quiet = true }))},
		"Strict":            {"logging.strict.", claim(4, "echo hi", sidecars, run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Strict = true }))},
		"Timed":             {"logging.timed.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Timed = true }))},
		"TimedBatch":        {"logging.timed in batch mode.", claim(4, "echo hi", container(func(c *v1alpha2.MiniClusterContainer) { c.Batch = true }), run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Timed = true }))},
		"Debug":             {"logging.debug.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Debug = true }))},
		"Zeromq":            {"logging.zeromq.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Zeromq = true }))},
		"LogLevel":          {"flux.logLevel.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.LogLevel = ptrTo(int32(2)) }))},
		"ConnectTimeoutOff": {`connectTimeout "".`, claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.ConnectTimeout = ptrTo("") }))},
		"ConnectTimeout10s": {`connectTimeout "10s".`, claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.ConnectTimeout = ptrTo("10s") }))},
		"Topology":          {"flux.topology.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Topology = "kary:2" }))},
		"MinSize":           {"minSize (quorum).", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.MinSize = 2; mc.Spec.MaxSize = 8 }))},
		"CompleteWorkers":   {"completeWorkers.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.CompleteWorkers = true }))},
		"DisableSocket":     {"disableSocket.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.DisableSocket = true }))},
		"Archive":           {"archive.path.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Archive.Path = "/state/archive.tar.gz" }))},
		"Environment":       {"flux.environment.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Environment = map[string]string{"A": "1", "B_2": "x y"} }))},
		"SchedulerSimple":   {"scheduler.simple.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Scheduler.Simple = true }))},
		"ContainerDisable":  {"flux.container.disable.", claim(4, "echo hi", sidecars, run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Container.Disable = true }))},
		"PythonPath":        {"flux.container.pythonPath.", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Container.PythonPath = "/opt/py" }))},
		"MountPath":         {"A non-default mount path.", claim(4, "echo hi", sidecars, run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.Container.MountPath = "/opt/flux" }))},
		"Sidecars":          {"Sidecars that wait for the socket.", claim(4, "echo hi", sidecars)},
		"SidecarsNoWait":    {"Sidecars with noWaitSocket.", claim(4, "echo hi", sidecars, run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Flux.NoWaitSocket = true; mc.Spec.Logging.Quiet = true }))},
		"Hostile": {"Hostile strings in every field.", claim(4, hostileCommand, sidecars, hooks, run(func(mc *v1alpha2.MiniCluster) {
			c := &mc.Spec.Containers[0]
			c.Commands.Prefix, c.Logs, c.Commands.Script = hostileCommand, "/x/"+hostile, hostile
			mc.Spec.Containers[1].Name = hostile
			mc.Spec.Containers[1].Command = hostile + "'"
			f := &mc.Spec.Flux
			f.OptionFlags, f.SubmitCommand, f.Wrap, f.Container.PythonPath = hostileCommand, hostileCommand, hostile, hostile
			f.Environment = map[string]string{"H": hostile}
			mc.Spec.Archive.Path = "/a/" + hostile
		}))},
		"HostileBatch":  {"Hostile batch lines.", claim(4, "echo '$(x)'\n\necho \"`y`\" ; *", container(func(c *v1alpha2.MiniClusterContainer) { c.Batch = true }))},
		"PodCoresGPUs":  {"Cores and GPUs from the pod (staticResources).", claim(4, "echo hi")},
		"PodGPUsOnly":   {"GPUs from the pod on the node's cores (staticResources).", claim(4, "echo hi", run(func(mc *v1alpha2.MiniCluster) { mc.Spec.Logging.Strict = true }))},
		"NodeResources": {"flux.resources: node (staticResources).", claim(4, "echo hi")},
	}
}

// staticResources are the resources internal/plan would decide for the
// claims of staticClaims that name them (it imports this package, so the
// tests cannot ask it); every other claim has none.
var staticResources = map[string]Resources{
	"PodCoresGPUs":  {Cores: 2, GPUs: 1},
	"PodGPUsOnly":   {GPUs: 2},
	"NodeResources": {FromNode: true},
}

// script is one generated file of one claim.
type genScript struct {
	claim, kind, text string
}

func generate(t *testing.T) (map[string][]genScript, map[string]string) {
	t.Helper()
	out := map[string][]genScript{}
	reasons := map[string]string{}
	for name, tc := range staticClaims() {
		mc := tc.mc
		reasons[name] = tc.reason
		p := plan(t, mc, Paths{})
		p.Resources = staticResources[name]
		out[name] = append(out[name], genScript{name, "init", Init(mc, p)})
		for i, c := range mc.Spec.Containers {
			if c.RunFlux {
				out[name] = append(out[name], genScript{name, fmt.Sprintf("wait-%d", i), Runner(mc, i, p)})
				continue
			}
			out[name] = append(out[name], genScript{name, fmt.Sprintf("start-%d", i), Sidecar(mc, i, p)})
		}
	}
	return out, reasons
}

// TestScriptVariablesListed: internal/plan refuses flux.environment names
// from ScriptVariables, so every variable a script assigns must be there.
func TestScriptVariablesListed(t *testing.T) {
	t.Parallel()
	// Assignments (x=, x+=) and loop variables, lowercase: the scripts'
	// own; uppercase names are the environment they export on purpose.
	re := regexp.MustCompile(`(?m)(?:^|[\s;(])(?:for ([a-z_][A-Za-z0-9_]*) in |([a-z_][A-Za-z0-9_]*)\+?=)`)
	listed := map[string]bool{}
	for _, v := range ScriptVariables {
		listed[v] = true
	}
	scripts, reasons := generate(t)
	for _, name := range sortedNames(scripts) {
		for _, s := range scripts[name] {
			// Comments assign nothing (# shellcheck disable=...).
			code := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(s.text, "")
			for _, m := range re.FindAllStringSubmatch(code, -1) {
				if v := m[1] + m[2]; !listed[v] {
					t.Errorf("%s (%s)\nthe script assigns %q, which is not in ScriptVariables", reasons[name], s.kind, v)
				}
			}
		}
	}
}

func TestScriptsAreValidBash(t *testing.T) {
	t.Parallel()
	scripts, reasons := generate(t)
	for name, list := range scripts {
		t.Run(name, func(t *testing.T) {
			for _, s := range list {
				bashSyntax(t, reasons[name]+" ("+s.kind+")", s.text)
				if !strings.HasPrefix(s.text, "#!/bin/bash\n") {
					t.Errorf("%s\n%s must start with #!/bin/bash", reasons[name], s.kind)
				}
			}
		})
	}
}

func TestScriptsPassShellcheck(t *testing.T) {
	t.Parallel()
	sc := tool(t, "shellcheck", "MC_SHELLCHECK")
	scripts, reasons := generate(t)
	dir := t.TempDir()

	// Identical scripts (most init scripts, many sidecars) are checked once.
	files := map[string]string{}    // text -> file
	owners := map[string][]string{} // file -> claims
	for _, name := range sortedNames(scripts) {
		for _, s := range scripts[name] {
			f, ok := files[s.text]
			if !ok {
				f = filepath.Join(dir, fmt.Sprintf("%s__%s.sh", name, s.kind))
				mustWrite(t, f, s.text, 0o644)
				files[s.text] = f
			}
			owners[filepath.Base(f)] = append(owners[filepath.Base(f)], name)
		}
	}
	var list []string
	for _, f := range files {
		list = append(list, f)
	}
	sort.Strings(list)

	// A few shellchecks in parallel keep this fast.
	n := runtime.NumCPU()
	outs := make([]bytes.Buffer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		var chunk []string
		for j := i; j < len(list); j += n {
			chunk = append(chunk, list[j])
		}
		if len(chunk) == 0 {
			continue
		}
		wg.Add(1)
		go func(i int, chunk []string) {
			defer wg.Done()
			args := append([]string{"-s", "bash", "-f", "gcc", "-e", strings.Join(shellcheckExclude, ",")}, chunk...)
			cmd := exec.Command(sc, args...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &outs[i], &stderr
			if err := cmd.Run(); err != nil && outs[i].Len() == 0 {
				errs[i] = fmt.Errorf("%v: %s", err, stderr.String())
			}
		}(i, chunk)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("shellcheck failed to run: %v", err)
		}
	}

	findings := map[string][]string{} // claim -> findings
	for i := range outs {
		sc := bufio.NewScanner(&outs[i])
		for sc.Scan() {
			line := strings.TrimPrefix(sc.Text(), dir+"/")
			base := strings.SplitN(line, ":", 2)[0]
			for _, name := range owners[base] {
				findings[name] = append(findings[name], line)
			}
		}
	}
	for _, name := range sortedNames(scripts) {
		t.Run(name, func(t *testing.T) {
			if f := findings[name]; len(f) > 0 {
				var texts []string
				for _, s := range scripts[name] {
					texts = append(texts, "--- "+s.kind+"\n"+numbered(s.text))
				}
				t.Errorf("%s\nshellcheck (files are named after the first claim with that script):\n%s\n%s", reasons[name], strings.Join(f, "\n"), strings.Join(texts, "\n"))
			}
		})
	}
}

func sortedNames(m map[string][]genScript) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		fmt.Fprintf(&b, "%4d  %s\n", i+1, l)
	}
	return b.String()
}
