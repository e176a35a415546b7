// Package division divides a binding's replicas over clusters exactly as
// Karmada v1.16 and later do for static weights (DESIGN.md section 5):
// the Webster (Sainte-Laguë) divisor method, seats handed out one at a
// time to the highest weight/(2*seats+1) compared as float64; ties go to
// the cluster with fewer seats, then by cluster name, ascending when the
// 32-bit FNV-1a hash of the resource UID is even (or the UID is empty),
// descending when it is odd.
//
// Webster is house-monotone: n+1 replicas never give any cluster fewer
// replicas than n did.
package division
