package node_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flux-framework/minicluster-crossplane/internal/driver"
	"github.com/flux-framework/minicluster-crossplane/test/harness"
)

// sdkBodyFile is the body the Flux Operator's Python SDK (PyPI fluxoperator
// 0.2.0: sdk/python/v1alpha2 of flux-framework/flux-operator at 1f686fea)
// sends for a MiniCluster built from its models, as its
// examples/create-minicluster-lammps.py and fluxoperator/resource/pods.py
// create_minicluster build one: MiniClusterSpec(size=2, tasks=1,
// containers=[MiniClusterContainer(image="ubuntu:noble", command="sleep 40",
// run_flux=True)], flux=FluxSpec(container=FluxContainer(),
// scheduler=FluxScheduler()), logging=LoggingSpec(strict=True, as
// _get_logging_spec sets it), network=Network()), commands=Commands().
// Every model's to_dict (pydantic model_dump, exclude_none) sends each field
// that has a non-None default, unset strings as "" (models/*.py).
const sdkBodyFile = "testdata/python-sdk.json"

// sdkPod is what the SDK's client reads of a pod.
type sdkPod struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Containers []struct {
			Name string `json:"name"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// sdkPods is FluxOperator.get_pods(name=…): every pod of the namespace
// whose name starts with the MiniCluster's name.
func sdkPods(t *testing.T, cp *harness.ControlPlane, ns, name string) ([]sdkPod, error) {
	out, err := kubectl(t, cp, "get", "pods", "-n", ns, "-o", "json")
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []sdkPod `json:"items"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, err
	}
	var pods []sdkPod
	for _, p := range list.Items {
		if strings.HasPrefix(p.Metadata.Name, name) {
			pods = append(pods, p)
		}
	}
	return pods, nil
}

// TestPythonSDK creates a MiniCluster as the Flux Operator's Python SDK
// does (the exact JSON body, POSTed to the MiniCluster API) and drives it
// as the SDK's client does: wait_pods, the broker pod by name, execute and
// stream_output without a container name, delete and
// wait_termination_pods. It runs to Succeeded.
func TestPythonSDK(t *testing.T) {
	cp := nodePlane(t, driver.ShapeClaims)
	ns := namespace(t, cp, "sdk")
	const name, size = "sdk", 2

	raw, err := os.ReadFile(sdkBodyFile)
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	body["metadata"].(map[string]any)["namespace"] = ns
	localImages(body)
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "sdk.json")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// crd_api.create_namespaced_custom_object: the body as the SDK
	// serialises it, no client-side defaulting or pruning.
	mustKubectl(t, cp, "create", "--raw", "/apis/flux-framework.org/v1alpha2/namespaces/"+ns+"/miniclusters", "-f", f)

	// wait_pods: until size pods have been seen Running or Succeeded
	// ("cert-generator" and "-services" pods skipped), with no timeout of
	// its own.
	seen := map[string]bool{}
	eventually(t, 3*time.Minute, fmt.Sprintf("wait_pods: %d pods seen Running or Succeeded", size), func() error {
		pods, err := sdkPods(t, cp, ns, name)
		if err != nil {
			return err
		}
		for _, p := range pods {
			n := p.Metadata.Name
			if strings.Contains(n, "cert-generator") || strings.HasSuffix(n, "-services") {
				continue
			}
			if slices.Contains([]string{"Running", "Succeeded", "Completed"}, p.Status.Phase) {
				seen[n] = true
			}
		}
		if len(seen) != size {
			return fmt.Errorf("seen %v", seen)
		}
		return nil
	})

	// broker_pod: the pod whose name starts with "<name>-0", Running
	// (get_broker_pod).
	var lead string
	eventually(t, time.Minute, "the broker pod "+name+"-0… Running", func() error {
		pods, err := sdkPods(t, cp, ns, name)
		if err != nil {
			return err
		}
		lead = ""
		for _, p := range pods {
			if strings.HasPrefix(p.Metadata.Name, name+"-0") && p.Status.Phase == "Running" {
				if lead != "" {
					return fmt.Errorf("two pods named %s-0…: %s and %s", name, lead, p.Metadata.Name)
				}
				if len(p.Spec.Containers) != 1 {
					// The SDK's exec and log calls name no container: the
					// API server refuses them for a pod of several.
					return fmt.Errorf("pod %s has %d containers, the SDK's exec and logs need one", p.Metadata.Name, len(p.Spec.Containers))
				}
				lead = p.Metadata.Name
			}
		}
		if lead == "" {
			return fmt.Errorf("no Running pod named %s-0… in %v", name, pods)
		}
		return nil
	})
	if !seen[lead] {
		t.Errorf("the broker pod %s is not among the pods wait_pods saw: %v", lead, seen)
	}

	// FluxBrokerMiniCluster.execute: /bin/sh -c through the lead's socket,
	// no container named. A pod is Running once its container has started,
	// which is before its broker has made the socket, so the SDK's own
	// interactive example sleeps 5 s before its first execute; the test
	// retries for as long instead.
	var res string
	eventually(t, 30*time.Second, "execute(flux resource list) through the lead's socket", func() error {
		out, err := kubectl(t, cp, "exec", "-n", ns, lead, "--", "/bin/sh", "-c", `. /mnt/flux/flux-view.sh && flux proxy $fluxsocket flux resource list`)
		if err != nil {
			return err
		}
		res = out
		return nil
	})
	t.Logf("execute(flux resource list):\n%s", res)
	if !strings.Contains(res, name+"-[0-1]") {
		t.Errorf("flux resource list: want both brokers %s-[0-1] in\n%s", name, res)
	}

	// stream_output: read_namespaced_pod_log(follow=True) of the lead, no
	// container named; it returns when the broker ends.
	logs := mustKubectl(t, cp, "get", "--raw", "/api/v1/namespaces/"+ns+"/pods/"+lead+"/log?follow=true")
	if strings.TrimSpace(logs) == "" {
		t.Error("stream_output: the lead's log is empty")
	}
	t.Logf("stream_output:\n%s", logs)

	eventually(t, 2*time.Minute, "PHASE Succeeded", func() error {
		c, err := columns(t, cp, ns, name)
		if err != nil {
			return err
		}
		if c["PHASE"] != "Succeeded" {
			return fmt.Errorf("PHASE %q", c["PHASE"])
		}
		return nil
	})

	// delete_minicluster, then wait_termination_pods: no pod left with
	// the name prefix.
	mustKubectl(t, cp, "delete", "--raw", "/apis/flux-framework.org/v1alpha2/namespaces/"+ns+"/miniclusters/"+name)
	eventually(t, 2*time.Minute, "wait_termination_pods: no pod named "+name+"…", func() error {
		pods, err := sdkPods(t, cp, ns, name)
		if err != nil {
			return err
		}
		if len(pods) > 0 {
			return fmt.Errorf("%d pods left", len(pods))
		}
		return nil
	})
}
