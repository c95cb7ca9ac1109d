package v1alpha1

import (
	"github.com/crossplane/crossplane-runtime/v2/pkg/resource"
	xpv2 "github.com/crossplane/crossplane/apis/v2/core/v2"
)

// The methods below make the types crossplane-runtime managed resources,
// provider configs and usages (what angryjet would generate).

// GetCondition of this Burst.
func (mg *Burst) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return mg.Status.GetCondition(ct)
}

// SetConditions of this Burst.
func (mg *Burst) SetConditions(c ...xpv2.Condition) { mg.Status.SetConditions(c...) }

// GetManagementPolicies of this Burst.
func (mg *Burst) GetManagementPolicies() xpv2.ManagementPolicies {
	return mg.Spec.ManagementPolicies
}

// SetManagementPolicies of this Burst.
func (mg *Burst) SetManagementPolicies(r xpv2.ManagementPolicies) {
	mg.Spec.ManagementPolicies = r
}

// GetProviderConfigReference of this Burst.
func (mg *Burst) GetProviderConfigReference() *xpv2.ProviderConfigReference {
	return mg.Spec.ProviderConfigReference
}

// SetProviderConfigReference of this Burst.
func (mg *Burst) SetProviderConfigReference(r *xpv2.ProviderConfigReference) {
	mg.Spec.ProviderConfigReference = r
}

// GetWriteConnectionSecretToReference of this Burst.
func (mg *Burst) GetWriteConnectionSecretToReference() *xpv2.LocalSecretReference {
	return mg.Spec.WriteConnectionSecretToReference
}

// SetWriteConnectionSecretToReference of this Burst.
func (mg *Burst) SetWriteConnectionSecretToReference(r *xpv2.LocalSecretReference) {
	mg.Spec.WriteConnectionSecretToReference = r
}

// GetItems of this BurstList.
func (l *BurstList) GetItems() []resource.Managed {
	items := make([]resource.Managed, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// GetCondition of this ProviderConfig.
func (p *ProviderConfig) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions of this ProviderConfig.
func (p *ProviderConfig) SetConditions(c ...xpv2.Condition) { p.Status.SetConditions(c...) }

// GetUsers of this ProviderConfig.
func (p *ProviderConfig) GetUsers() int64 { return p.Status.Users }

// SetUsers of this ProviderConfig.
func (p *ProviderConfig) SetUsers(i int64) { p.Status.Users = i }

// GetCondition of this ClusterProviderConfig.
func (p *ClusterProviderConfig) GetCondition(ct xpv2.ConditionType) xpv2.Condition {
	return p.Status.GetCondition(ct)
}

// SetConditions of this ClusterProviderConfig.
func (p *ClusterProviderConfig) SetConditions(c ...xpv2.Condition) { p.Status.SetConditions(c...) }

// GetUsers of this ClusterProviderConfig.
func (p *ClusterProviderConfig) GetUsers() int64 { return p.Status.Users }

// SetUsers of this ClusterProviderConfig.
func (p *ClusterProviderConfig) SetUsers(i int64) { p.Status.Users = i }

// GetProviderConfigReference of this ProviderConfigUsage.
func (u *ProviderConfigUsage) GetProviderConfigReference() xpv2.ProviderConfigReference {
	return u.ProviderConfigReference
}

// SetProviderConfigReference of this ProviderConfigUsage.
func (u *ProviderConfigUsage) SetProviderConfigReference(r xpv2.ProviderConfigReference) {
	u.ProviderConfigReference = r
}

// GetResourceReference of this ProviderConfigUsage.
func (u *ProviderConfigUsage) GetResourceReference() xpv2.TypedReference {
	return u.ResourceReference
}

// SetResourceReference of this ProviderConfigUsage.
func (u *ProviderConfigUsage) SetResourceReference(r xpv2.TypedReference) {
	u.ResourceReference = r
}

// GetItems of this ProviderConfigUsageList.
func (l *ProviderConfigUsageList) GetItems() []resource.ProviderConfigUsage {
	items := make([]resource.ProviderConfigUsage, len(l.Items))
	for i := range l.Items {
		items[i] = &l.Items[i]
	}
	return items
}

// Compile-time checks that the types are what crossplane-runtime expects.
var (
	_ resource.ModernManaged            = &Burst{}
	_ resource.ManagedList              = &BurstList{}
	_ resource.ProviderConfig           = &ProviderConfig{}
	_ resource.ProviderConfig           = &ClusterProviderConfig{}
	_ resource.TypedProviderConfigUsage = &ProviderConfigUsage{}
	_ resource.ProviderConfigUsageList  = &ProviderConfigUsageList{}
)
