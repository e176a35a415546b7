// Package tenant resolves each Tenant's boundary into its status: the
// clusters its cluster set holds now, the namespaces it shares with other
// tenants, and a Ready condition that reports an ambiguous or invalid
// boundary (a shared namespace without resourceSelector, a subject listed
// by several tenants, a selector that does not parse). The admission
// policies read that status (CEL cannot list clusters or other tenants);
// the detector, scheduler and executor read the Tenants themselves
// (pkg/tenancy), so a stale status never widens a boundary.
package tenant
