package render

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/flux-framework/minicluster-crossplane/apis/minicluster/v1alpha2"
	"github.com/flux-framework/minicluster-crossplane/internal/plan"
)

// BrokerService gives the brokers their DNS names: headless over every pod
// (publishing pods before they are ready, because brokers must find each
// other to become ready), or with flux.minimalService a ClusterIP Service
// for the lead broker only.
func BrokerService(in Input) *corev1.Service {
	mc := in.MiniCluster
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(in, in.Names.Service, nil),
	}
	if mc.Spec.Flux.MinimalService {
		svc.Spec = corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			PublishNotReadyAddresses: true,
			Selector:                 leadBrokerSelector(in),
			Ports:                    []corev1.ServicePort{brokerPort()},
		}
		return svc
	}
	svc.Spec = corev1.ServiceSpec{
		ClusterIP:                corev1.ClusterIPNone,
		PublishNotReadyAddresses: true,
		Selector:                 map[string]string{plan.LabelJobName: mc.Name},
	}
	return svc
}

// LeadBrokerService exposes the root's rank-0 broker on a NodePort so burst
// clusters elsewhere can join.
func LeadBrokerService(in Input) *corev1.Service {
	port := brokerPort()
	port.NodePort = in.MiniCluster.Spec.Flux.Bursting.LeadBrokerService.NodePort
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(in, in.Names.LeadBroker, nil),
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeNodePort,
			PublishNotReadyAddresses: true,
			Selector:                 leadBrokerSelector(in),
			Ports:                    []corev1.ServicePort{port},
		},
	}
}

// leadBrokerSelector selects the pod of completion index 0 alone: rank 0
// is the broker the others, and bursts, connect to.
func leadBrokerSelector(in Input) map[string]string {
	return map[string]string{plan.LabelJobName: in.MiniCluster.Name, plan.LabelCompletionIndex: LeadIndex}
}

func brokerPort() corev1.ServicePort {
	return corev1.ServicePort{
		Name:       "flux-broker",
		Port:       v1alpha2.BrokerPort,
		TargetPort: intstr.FromInt32(v1alpha2.BrokerPort),
		Protocol:   corev1.ProtocolTCP,
	}
}

// ContainerServices are one ClusterIP Service per non-runner container with
// ports, named after the container. They select by the MiniCluster's name
// label because every broker pod runs a copy of the container.
func ContainerServices(in Input) []*corev1.Service {
	mc := in.MiniCluster
	var out []*corev1.Service
	for _, i := range plan.ContainerServices(mc) {
		c := &mc.Spec.Containers[i]
		svc := &corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: meta(in, c.Name, nil),
			Spec: corev1.ServiceSpec{
				Type:     corev1.ServiceTypeClusterIP,
				Selector: map[string]string{plan.LabelName: mc.Name},
			},
		}
		for _, p := range c.Ports {
			svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
				Name: "port-" + strconv.Itoa(int(p)), Port: p, TargetPort: intstr.FromInt32(p), Protocol: corev1.ProtocolTCP,
			})
		}
		out = append(out, svc)
	}
	return out
}
