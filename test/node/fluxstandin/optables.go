package main

// optTables are the options each client command takes, by command, so a
// test can check every invocation of the project's scripts against them.
// flux submit, run, batch, start and broker have theirs beside them
// (jobOpts, startOpts, brokerOpts); module load and remove share one.
var optTables = map[string][]opt{
	"flux R encode":       {{'r', "ranks", true}, {'c', "cores", true}, {'g', "gpus", true}, {'H', "hosts", true}, {'l', "local", false}},
	"flux R decode":       {{'c', "count", true}},
	"flux cancel":         {{'m', "message", true}, {'q', "quiet", false}},
	"flux job attach":     {{'l', "label-io", false}, {'q', "quiet", false}, {'v', "verbose", false}},
	"flux job wait":       {{'a', "all", false}, {'v', "verbose", false}},
	"flux jobs":           {{'a', "all", false}, {'A', "all-users", false}, {'n', "no-header", false}, {'c', "count", true}},
	"flux lsattr":         {{'v', "values", false}},
	"flux module load":    {{'f', "force", false}},
	"flux overlay status": {{0, "no-pretty", false}},
	"flux proxy":          {{0, "force", false}, {0, "nohup", false}},
	"flux queue idle":     {{0, "quiet", false}},
	"flux resource list":  {{'s', "states", true}, {'n', "no-header", false}, {0, "skip-empty", false}},
	"flux shutdown":       {{0, "quiet", false}, {0, "background", false}, {'y', "yes", false}, {0, "skip-gc", false}, {'v', "verbose", false}},
}
