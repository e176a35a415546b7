// Package testing holds builders for test objects, Kueue style:
//
//	MakeCluster("m1").Region("r1").Zones("z1").Taint("k", "", corev1.TaintEffectNoSchedule).Obj()
//	MakeBinding("web-deployment", "default").Resource("apps/v1", "Deployment", "web").Replicas(3).Obj()
//
// Builders fill only what the test sets, plus the fields the API server
// requires (e.g. a Cluster's syncMode), so objects can also be created on a
// real API server.
package testing
