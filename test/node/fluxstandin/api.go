package main

// The local socket protocol: a client connects to the broker's local-uri,
// writes one request as a JSON line and reads responses, the last marked
// final. A broker other than rank 0 relays what only rank 0 answers.

// request is a client's request.
type request struct {
	Op string `json:"op"`
	// Scope is the batch job the client runs in (FLUX_STANDIN_SCOPE), or ""
	// for the instance itself: jobs, waits and queue idle see their scope.
	Scope string      `json:"scope,omitempty"`
	Job   *jobRequest `json:"job,omitempty"`
	ID    uint64      `json:"id,omitempty"`
	Name  string      `json:"name,omitempty"`
	Args  []string    `json:"args,omitempty"`
	All   bool        `json:"all,omitempty"`
}

// Request ops.
const (
	opPing      = "ping"
	opSubmit    = "submit"
	opAttach    = "attach"
	opWait      = "wait"
	opJobs      = "jobs"
	opCancel    = "cancel"
	opIdle      = "queue-idle"
	opResources = "resource-list"
	opOverlay   = "overlay-status"
	opGetattr   = "getattr"
	opLsattr    = "lsattr"
	opUptime    = "uptime"
	opModule    = "module"
	opShutdown  = "shutdown"
)

// jobRequest is a submitted job: what jobspec would carry.
type jobRequest struct {
	Argv         []string `json:"argv"`
	Env          []string `json:"env"`
	Cwd          string   `json:"cwd"`
	Name         string   `json:"name,omitempty"`
	NNodes       int      `json:"nnodes,omitempty"`
	NTasks       int      `json:"ntasks,omitempty"`
	CoresPerTask int      `json:"cores_per_task,omitempty"`
	GPUsPerTask  int      `json:"gpus_per_task,omitempty"`
	Exclusive    bool     `json:"exclusive,omitempty"`
	Waitable     bool     `json:"waitable,omitempty"`
	Output       string   `json:"output,omitempty"`
	Error        string   `json:"error,omitempty"`
	// TimeLimit in seconds; 0 is none.
	TimeLimit float64 `json:"time_limit,omitempty"`
	// Script is a batch job's script, run as its only task's program.
	Script string `json:"script,omitempty"`
	// Attrs (--setattr) and ShellOpts (-o) are recorded, not acted on.
	Attrs     []string `json:"attrs,omitempty"`
	ShellOpts []string `json:"shell_opts,omitempty"`
}

// taskSpec is what a broker runs for a job: the tasks of the job it got.
type taskSpec struct {
	Argv    []string `json:"argv"`
	Env     []string `json:"env"`
	Cwd     string   `json:"cwd"`
	TaskIDs []int    `json:"taskids"`
	NTasks  int      `json:"ntasks"`
	NNodes  int      `json:"nnodes"`
	Script  string   `json:"script,omitempty"`
	// Scope is where what the tasks submit goes: the job's own scope, or
	// for a batch job its own id.
	Scope string `json:"scope,omitempty"`
}

// response is one answer to a request.
type response struct {
	Error string `json:"error,omitempty"`
	// Errno names the error kind where a client's exit status depends on
	// it (ECHILD for flux job wait).
	Errno string `json:"errno,omitempty"`
	Final bool   `json:"final,omitempty"`

	ID uint64 `json:"id,omitempty"`
	// Output of a task (attach).
	Stream string `json:"stream,omitempty"`
	TaskID int    `json:"taskid,omitempty"`
	Data   []byte `json:"data,omitempty"`
	// End of a job (attach, wait): its exit code and, when it failed, why.
	Done     bool   `json:"done,omitempty"`
	ExitCode int    `json:"exitcode,omitempty"`
	Success  bool   `json:"success,omitempty"`
	ErrStr   string `json:"errstr,omitempty"`
	Value    string `json:"value,omitempty"`

	Jobs      []jobInfo         `json:"jobs,omitempty"`
	Attrs     map[string]string `json:"attrs,omitempty"`
	Resources *resourceInfo     `json:"resources,omitempty"`
	Overlay   []overlayNode     `json:"overlay,omitempty"`
	Modules   []string          `json:"modules,omitempty"`
}

// jobInfo is a line of flux jobs.
type jobInfo struct {
	ID       uint64  `json:"id"`
	User     string  `json:"user"`
	Name     string  `json:"name"`
	State    string  `json:"state"`
	NTasks   int     `json:"ntasks"`
	NNodes   int     `json:"nnodes"`
	Seconds  float64 `json:"seconds"`
	Nodelist string  `json:"nodelist"`
	Result   string  `json:"result,omitempty"`
}

// resourceInfo is what flux resource list shows: per rank, its host, its
// cores and GPUs, how many cores are allocated, and whether it is up.
type resourceInfo struct {
	Ranks []rankResources `json:"ranks"`
}

type rankResources struct {
	Rank      int    `json:"rank"`
	Host      string `json:"host"`
	Cores     int    `json:"cores"`
	GPUs      int    `json:"gpus"`
	Allocated int    `json:"allocated"`
	Up        bool   `json:"up"`
}

// overlayNode is a rank of flux overlay status.
type overlayNode struct {
	Rank   int    `json:"rank"`
	Parent int    `json:"parent"`
	Host   string `json:"host"`
	Status string `json:"status"`
}
