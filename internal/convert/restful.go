package convert

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// The Flux RESTful API pattern (examples/restful-api, docs/restful-api.md).
// v1alpha1 served the Flux RESTful API from the lead broker when the runner
// had no command: it cloned flux-framework/flux-restful-api, made its
// database and ran uvicorn as the lead broker's initial program. v1alpha2
// has no field for it; the same runs from the upstream image:
//
//   - launcher: true makes the server (uvicorn) the lead broker's initial
//     program, so it runs inside the Flux instance (FLUX_URI set) and the
//     cluster lives as long as the server does;
//   - workingDir /code, where the image has the server and its database;
//   - commands.brokerPre makes the database on the lead, before it starts;
//   - the credentials and the key that signs tokens come from a Secret
//     (containers[].secrets), never from the manifest.
const (
	// RestfulImage is the upstream image of the Flux RESTful API.
	RestfulImage = "ghcr.io/flux-framework/flux-restful-api"
	// RestfulDir is where the image has the server's code.
	RestfulDir = "/code"
	// RestfulPort is the server's port unless fluxRestful.port says otherwise.
	RestfulPort int32 = 5000
	// RestfulDatabase makes the server's database (as the image's own
	// entrypoint does), in RestfulDir.
	RestfulDatabase = `alembic revision --autogenerate -m "Create initial tables" && alembic upgrade head && python3 app/db/init_db.py init`

	// Keys of the Secret RestfulSecret names.
	RestfulKeyUser      = "user"
	RestfulKeyToken     = "token"
	RestfulKeySecretKey = "secret-key"
)

// RestfulSecret is the Secret a converted MiniCluster reads the server's
// credentials and secret key from.
func RestfulSecret(name string) string { return name + "-restful-api" }

// RestfulCommand runs the server on port.
func RestfulCommand(port int32) string {
	return "uvicorn app.main:app --host=0.0.0.0 --port=" + strconv.Itoa(int(port))
}

// Restful makes container i of mc serve the Flux RESTful API on port from
// the lead broker (see the package's RestfulImage and friends).
func Restful(mc *v1alpha2.MiniCluster, i int, port int32) {
	c := &mc.Spec.Containers[i]
	c.Launcher, c.Batch, c.BatchRaw = true, false, false
	c.Command = RestfulCommand(port)
	c.WorkingDir = RestfulDir
	if !slices.Contains(c.Ports, port) {
		c.Ports = append(c.Ports, port)
	}
	c.Commands.BrokerPre = joinHooks(c.Commands.BrokerPre, RestfulDatabase)
	size := v1alpha2.DefaultSize
	if mc.Spec.Size != nil {
		size = *mc.Spec.Size
	}
	env := map[string]string{
		// Any non-empty value turns authentication on.
		"FLUX_REQUIRE_AUTH": "true",
		"FLUX_NUMBER_NODES": strconv.Itoa(int(size)),
	}
	if f := mc.Spec.Flux.OptionFlags; f != "" {
		// The server's default flags for the jobs it submits.
		env["FLUX_OPTION_FLAGS"] = f
	}
	if c.Environment == nil {
		c.Environment = map[string]string{}
	}
	for k, v := range env {
		c.Environment[k] = v
	}
	if c.Secrets == nil {
		c.Secrets = map[string]v1alpha2.Secret{}
	}
	secret := RestfulSecret(mc.Name)
	c.Secrets["FLUX_USER"] = v1alpha2.Secret{Name: secret, Key: RestfulKeyUser}
	c.Secrets["FLUX_TOKEN"] = v1alpha2.Secret{Name: secret, Key: RestfulKeyToken}
	c.Secrets["FLUX_SECRET_KEY"] = v1alpha2.Secret{Name: secret, Key: RestfulKeySecretKey}
}

// restful applies the pattern to a runner without a command, as v1alpha1
// did, and says what became of spec.fluxRestful.
func (c *converter) restful(runner int) {
	fr := c.in.Spec.FluxRestful
	if runner < 0 {
		c.restfulUnused(fr, "there is no single Flux runner")
		return
	}
	rc := &c.in.Spec.Containers[runner]
	p := fmt.Sprintf("spec.containers[%d]", runner)
	switch {
	case rc.Command != "":
		c.restfulUnused(fr, "the runner has a command, so v1alpha1 ran it instead of the server")
		return
	case c.in.Spec.Interactive:
		c.restfulUnused(fr, "the cluster is interactive, so v1alpha1 started no server")
		return
	case rc.Diagnostics != nil && *rc.Diagnostics:
		c.out.Spec.Interactive = true
		c.restfulUnused(fr, "the runner ran diagnostics, so v1alpha1 started no server")
		return
	}
	port := RestfulPort
	if fr != nil && fr.Port != 0 {
		port = fr.Port
	}
	Restful(c.out, runner, port)

	name, ns := c.out.Name, c.out.Namespace
	secret := RestfulSecret(name)
	nsFlag := ""
	if ns != "" {
		nsFlag = " -n " + ns
	}
	c.note(p+".command", "not set: v1alpha1 then served the Flux RESTful API from the lead broker, and so does the claim: launcher: true runs %s in %s as the lead broker's initial program, after commands.brokerPre made its database. Before applying it, create the Secret it reads FLUX_USER, FLUX_TOKEN and FLUX_SECRET_KEY from: kubectl create secret generic %s%s --from-literal=%s=<user> --from-literal=%s=<token> --from-literal=%s=<key>. Reach it with kubectl port-forward%s pod/<the %s-0 pod> %d (docs/restful-api.md)",
		RestfulCommand(port), RestfulDir, secret, nsFlag, RestfulKeyUser, RestfulKeyToken, RestfulKeySecretKey, nsFlag, name, port)
	if img := rc.Image; !strings.HasPrefix(img, RestfulImage+":") && img != RestfulImage && !strings.HasPrefix(img, RestfulImage+"@") {
		c.note(p+".image", "the server starts from %s, where the %s image has it (v1alpha1 cloned and pip-installed it into any image at start): use that image, or one built from it", RestfulDir, RestfulImage)
	}
	if rc.WorkingDir != "" && rc.WorkingDir != RestfulDir {
		c.note(p+".workingDir", "replaced by %s: the server starts where its code and database are, as v1alpha1 changed into its clone; jobs name their own working directory when they are submitted", RestfulDir)
	}
	if fr == nil {
		return
	}
	if fr.Branch != "" {
		c.note("spec.fluxRestful.branch", "no v1alpha2 meaning: the server comes from the image (v1alpha1 cloned this branch at start); to run a branch, build the image from it; dropped")
	}
	if fr.Port != 0 {
		c.note("spec.fluxRestful.port", "no v1alpha2 field: the server listens on %d (%s.command --port=%d and %s.ports)", fr.Port, p, fr.Port, p)
	}
	for _, f := range []struct {
		name, value, key, env string
	}{
		{"username", fr.Username, RestfulKeyUser, "FLUX_USER"},
		{"token", fr.Token, RestfulKeyToken, "FLUX_TOKEN"},
		{"secretKey", fr.SecretKey, RestfulKeySecretKey, "FLUX_SECRET_KEY"},
	} {
		if f.value != "" {
			c.note("spec.fluxRestful."+f.name, "not copied into the claim: the server reads %s from Secret %s, key %s: put the value there (kubectl create secret generic %s ... --from-literal=%s=...)", f.env, secret, f.key, secret, f.key)
		}
	}
}

// restfulUnused notes every fluxRestful field of a cluster that served no
// RESTful API.
func (c *converter) restfulUnused(fr *v1alpha1FluxRestful, why string) {
	if fr == nil {
		return
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"branch", fr.Branch != ""}, {"port", fr.Port != 0}, {"secretKey", fr.SecretKey != ""}, {"username", fr.Username != ""}, {"token", fr.Token != ""}} {
		if f.set {
			c.note("spec.fluxRestful."+f.name, "no effect: %s; dropped", why)
		}
	}
}
