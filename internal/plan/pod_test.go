package plan

import (
	"strings"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
)

// podInvalid: spec.pod, spec.jobLabels and runAsNonRoot (checkPod,
// checkNonRoot).
func podInvalid() map[string]invalidCase {
	return map[string]invalidCase{
		"BadLabelKey": {
			reason: "Label keys are qualified names.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Labels = map[string]string{"bad key": "v"} })),
			want:   invalid{fields: []string{"spec.pod.labels[bad key]"}, msg: "name part must consist of alphanumeric characters"},
		},
		"BadLabelValue": {
			reason: "Label values are restricted too.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Labels = map[string]string{"tier": "not ok!"} })),
			want:   invalid{fields: []string{"spec.pod.labels[tier]"}, msg: "a valid label must be an empty string or consist of alphanumeric characters"},
		},
		"BadNodeSelector": {
			reason: "nodeSelector entries are labels.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.NodeSelector = map[string]string{"zone": "us central"} })),
			want:   invalid{fields: []string{"spec.pod.nodeSelector[zone]"}, msg: "a valid label"},
		},
		"NodeAffinityNoValues": {
			reason: "An In requirement without values matches no node.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.NodeAffinity = map[string][]string{"topology.kubernetes.io/zone": nil} })),
			want:   invalid{fields: []string{"spec.pod.nodeAffinity[topology.kubernetes.io/zone]"}, msg: "list at least one value"},
		},
		"NodeAffinityBadKey": {
			reason: "nodeAffinity keys are label keys.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.NodeAffinity = map[string][]string{"bad key": {"a"}} })),
			want:   invalid{fields: []string{"spec.pod.nodeAffinity[bad key]"}, msg: "name part must consist of alphanumeric characters"},
		},
		"TolerationExistsWithValue": {
			reason: "Exists matches any value, so a value is a mistake.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.Tolerations = []v1alpha2.Toleration{{Key: "gpu", Operator: "Exists", Value: "yes"}}
			})),
			want: invalid{fields: []string{"spec.pod.tolerations[0].value"}, msg: "must be empty when operator is Exists"},
		},
		"TolerationNoKeyEqual": {
			reason: "Without a key, a toleration must tolerate everything (Exists).",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Tolerations = []v1alpha2.Toleration{{Operator: "Equal", Value: "x"}} })),
			want:   invalid{fields: []string{"spec.pod.tolerations[0].operator"}, msg: "must be Exists when key is empty"},
		},
		"TolerationNoKeyNoOperator": {
			reason: "The operator defaults to Equal, which needs a key.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.Tolerations = []v1alpha2.Toleration{{Key: "ok", Operator: "Exists"}, {Effect: "NoSchedule"}}
			})),
			want: invalid{fields: []string{"spec.pod.tolerations[1].operator"}, msg: "must be Exists when key is empty"},
		},
		"JobLabelBadKey": {
			reason: "jobLabels are the Job's labels.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.JobLabels = map[string]string{"bad key": "x"} })),
			want:   invalid{fields: []string{"spec.jobLabels[bad key]"}, msg: "name part must consist of alphanumeric characters"},
		},
		"JobLabelOwnedByJobController": {
			reason: "job-name on the Job would make selectors meant for its pods pick the Job.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.JobLabels = map[string]string{"job-name": "x"} })),
			want:   invalid{fields: []string{"spec.jobLabels[job-name]"}, msg: "the Job controller sets on the broker pods"},
		},
		"JobLabelCrossplanes": {
			reason: "Crossplane overwrites its own labels on what it composes.",
			args:   mc(withSpec(func(s *v1alpha2.MiniClusterSpec) { s.JobLabels = map[string]string{"crossplane.io/composite": "x"} })),
			want:   invalid{fields: []string{"spec.jobLabels[crossplane.io/composite]"}, msg: "set by Crossplane"},
		},
		"PodLabelOwnedByJobController": {
			reason: "job-name is the Job controller's, and the Services select on it.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Labels = map[string]string{"job-name": "other"} })),
			want:   invalid{fields: []string{"spec.pod.labels[job-name]"}, msg: "set on the broker pods by the Job controller"},
		},
		"PodLabelBatchPrefix": {
			reason: "batch.kubernetes.io/ labels belong to the Job controller.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.Labels = map[string]string{"batch.kubernetes.io/job-completion-index": "0"}
			})),
			want: invalid{fields: []string{"spec.pod.labels[batch.kubernetes.io/job-completion-index]"}, msg: "use another label key"},
		},
		"PodAnnotationsTooLarge": {
			reason: "Kubernetes caps annotations at 256 KiB.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Annotations = map[string]string{"big": strings.Repeat("x", 300*1024)} })),
			want:   invalid{fields: []string{"spec.pod.annotations"}, msg: "Too long: the annotations add up to 307203 bytes, more than 261120"},
		},
		"PodAnnotationBadKey": {
			reason: "Annotation keys are qualified names.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.Annotations = map[string]string{"a/b/c": "x"} })),
			want:   invalid{fields: []string{"spec.pod.annotations[a/b/c]"}, msg: "must consist of alphanumeric characters"},
		},
		"RunAsNonRootRunnerUID0": {
			reason: "The kubelet refuses a container that would run as uid 0 in a runAsNonRoot pod.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.SecurityContext.RunAsNonRoot = ptr(true)
				p.SecurityContext.RunAsUser = ptr(int64(1000))
			}), withRunner(func(c *v1alpha2.MiniClusterContainer) { c.SecurityContext.RunAsUser = ptr(int64(0)) })),
			want: invalid{fields: []string{"spec.containers[0].securityContext.runAsUser"}, msg: "the kubelet refuses to start a container as uid 0"},
		},
		"RunAsNonRootViewAsRoot": {
			reason: "Without a uid the init container runs as the Flux view image's user, root.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.SecurityContext.RunAsNonRoot = ptr(true) })),
			want:   invalid{fields: []string{"spec.pod.securityContext.runAsNonRoot"}, msg: "runs as root, and the kubelet refuses to start it with runAsNonRoot"},
		},
		"DNSPolicyDefault": {
			reason: "The node's resolver cannot resolve the brokers' cluster DNS names.",
			args:   mc(withPod(func(p *v1alpha2.PodSpec) { p.DNSPolicy = "Default" })),
			want:   invalid{fields: []string{"spec.pod.dnsPolicy"}, msg: "cannot resolve the names the brokers connect to"},
		},
	}
}

// podValid: every pod setting.
func podValid() map[string]validCase {
	return map[string]validCase{
		"Pod": {
			reason: "Every pod setting with valid values.",
			args: mc(withPod(func(p *v1alpha2.PodSpec) {
				p.RestartPolicy = "Never"
				p.DNSPolicy = "ClusterFirstWithHostNet"
				p.Labels = map[string]string{"app.kubernetes.io/part-of": "hpc", "empty": ""}
				p.Annotations = map[string]string{"example.com/note": "anything goes!"}
				p.NodeSelector = map[string]string{"cloud.google.com/gke-nodepool": "c2"}
				p.NodeAffinity = map[string][]string{"topology.kubernetes.io/zone": {"us-central1-a", "us-central1-b"}}
				p.Tolerations = []v1alpha2.Toleration{
					{Operator: "Exists"},
					{Key: "gpu", Operator: "Exists", Effect: "NoSchedule"},
					{Key: "hpc", Operator: "Equal", Value: "true", Effect: "NoExecute"},
					{Key: "hpc", Value: "true"},
				}
				p.RuntimeClassName = "kata"
			})),
		},
	}
}
