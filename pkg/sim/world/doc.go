// Package world is the global traffic layer of the simulated world. Each
// application (pods labelled app=NAME) has an offered CPU load, set with
// SetLoad. Every member publishes how many Ready pods of each app it runs
// (PublishReady), and a View spreads the load of an app evenly over the Ready
// pods of all reachable members: those whose ReadyReport is fresh and whose
// fault state is not partitioned. The share of one pod is its CPU usage, which
// the member serves through metrics.k8s.io so the real HPA controller reacts
// to it.
//
// The processes share nothing but the files described in package simdir.
package world
