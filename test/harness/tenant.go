package harness

import (
	"context"
	"fmt"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TenantRules are what a tenant who may create MiniClusters, and nothing
// else, holds in its namespace: the rights a platform grants with the
// claim's (or the v2 composite's) kind and no others.
var TenantRules = []rbacv1.PolicyRule{{
	APIGroups: []string{"flux-framework.org"},
	Resources: []string{"miniclusters"},
	Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
}}

// BurstTenantRules add what a platform grants a tenant it lets burst:
// Bursts and namespaced ProviderConfigs, and Secrets to hold a kubeconfig.
var BurstTenantRules = []rbacv1.PolicyRule{{
	APIGroups: []string{"bursting.flux-framework.org"},
	Resources: []string{"bursts", "providerconfigs"},
	Verbs:     []string{"get", "list", "watch", "create", "update", "patch", "delete"},
}, {
	APIGroups: []string{""},
	Resources: []string{"secrets"},
	Verbs:     []string{"get", "list", "create", "update", "patch", "delete"},
}}

// AsTenant returns a client that acts as user, who holds only rules in
// namespace ns (a Role and RoleBinding the harness creates as admin):
// requests are the admin's, impersonating user, so the API server's
// authorization and admission see the tenant, as they would for a
// tenant's own kubeconfig. The namespace must exist.
func (cp *ControlPlane) AsTenant(ctx context.Context, ns, user string, rules ...[]rbacv1.PolicyRule) (client.Client, error) {
	var all []rbacv1.PolicyRule
	for _, r := range rules {
		all = append(all, r...)
	}
	if len(all) == 0 {
		all = TenantRules
	}
	name := "tenant-" + user
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: all}
	if err := cp.Client.Create(ctx, role); err != nil {
		return nil, fmt.Errorf("cannot create the tenant's Role %s/%s: %w", ns, name, err)
	}
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	if err := cp.Client.Create(ctx, rb); err != nil {
		return nil, fmt.Errorf("cannot create the tenant's RoleBinding %s/%s: %w", ns, name, err)
	}
	cfg := rest.CopyConfig(cp.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:authenticated"}}
	c, err := client.New(cfg, client.Options{Scheme: cp.Client.Scheme(), Mapper: cp.Client.RESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("cannot build a client impersonating %s: %w", user, err)
	}
	return c, nil
}
