package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/atoll-dev/atoll/pkg/clustercache"
	"github.com/atoll-dev/atoll/pkg/ownership"
	"github.com/atoll-dev/atoll/pkg/util/names"
)

// A tombstone records a withdrawal that could not run because its member
// was not Ready when the binding went (its template was deleted): the
// binding's finalizer is not held up by a dead member (so the template can
// be created again at once), and the copy is removed when the member is
// back, with the exact ownership record of the binding that made it (the
// permanent id the tombstone keeps). Tombstones of one cluster live in the
// ConfigMap atoll-withdrawals-CLUSTER of the system namespace.
type tombstone struct {
	APIVersion string           `json:"apiVersion"`
	Kind       string           `json:"kind"`
	Namespace  string           `json:"namespace,omitempty"`
	Name       string           `json:"name"`
	Owner      ownership.Record `json:"owner"`
	// HandBack keeps the object (removing atoll's marks) instead of
	// deleting it.
	HandBack bool `json:"handBack,omitempty"`
}

func tombstoneConfigMap(cluster string) types.NamespacedName {
	return types.NamespacedName{Namespace: names.SystemNamespace, Name: "atoll-withdrawals-" + cluster}
}

func (t tombstone) key() string {
	sum := sha256.Sum256([]byte(t.APIVersion + "|" + t.Kind + "|" + t.Namespace + "|" + t.Name + "|" + t.Owner.PermanentID))
	return hex.EncodeToString(sum[:10])
}

// bury records t for cluster (idempotent).
func (r *reconciler) bury(ctx context.Context, cluster string, t tombstone) error {
	data, err := json.Marshal(t)
	if err != nil {
		return err
	}
	key := tombstoneConfigMap(cluster)
	cm := &corev1.ConfigMap{}
	err = r.client.Get(ctx, key, cm)
	if apierrors.IsNotFound(err) {
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{"app.kubernetes.io/managed-by": names.FieldManager}},
			Data: map[string]string{t.key(): string(data)}}
		if err := r.client.Create(ctx, cm); err != nil {
			return fmt.Errorf("recording a pending withdrawal from cluster %s: %w", cluster, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading pending withdrawals of cluster %s: %w", cluster, err)
	}
	if cm.Data[t.key()] == string(data) {
		return nil
	}
	patch := client.MergeFromWithOptions(cm.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[t.key()] = string(data)
	if err := r.client.Patch(ctx, cm, patch); err != nil {
		return fmt.Errorf("recording a pending withdrawal from cluster %s: %w", cluster, err)
	}
	return nil
}

// exhume carries out the pending withdrawals of a Ready cluster and forgets
// the ones done. An object that no longer carries the recorded ownership
// (gone, re-created, taken by another binding) is left alone.
func (r *reconciler) exhume(ctx context.Context, cluster string) error {
	cm := &corev1.ConfigMap{}
	if err := r.client.Get(ctx, tombstoneConfigMap(cluster), cm); err != nil {
		return client.IgnoreNotFound(err)
	}
	if len(cm.Data) == 0 {
		return nil
	}
	member, err := r.cc.Member(ctx, cluster)
	if err != nil {
		return err
	}
	done := map[string]bool{}
	for key, raw := range cm.Data {
		var t tombstone
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			done[key] = true // not ours to read: drop it
			continue
		}
		if t.Owner.Cluster != r.kindIsCluster() {
			continue // the other kind's executor handles it
		}
		leave, ok := r.opts.Shards.Enter(t.Namespace, names.BindingName(t.Kind, t.Name))
		if !ok {
			continue // another process's shard
		}
		finished, err := r.exhumeOne(ctx, member, cluster, t)
		leave()
		if err != nil {
			return err
		}
		if finished {
			done[key] = true
		}
	}
	if len(done) == 0 {
		return nil
	}
	patch := client.MergeFromWithOptions(cm.DeepCopy(), client.MergeFromWithOptimisticLock{})
	for key := range done {
		delete(cm.Data, key)
	}
	if len(cm.Data) == 0 {
		return client.IgnoreNotFound(r.client.Delete(ctx, cm, client.Preconditions{ResourceVersion: &cm.ResourceVersion}))
	}
	return r.client.Patch(ctx, cm, patch)
}

// exhumeOne carries out one pending withdrawal; finished says the
// tombstone can go.
func (r *reconciler) exhumeOne(ctx context.Context, member *clustercache.Member, cluster string, t tombstone) (finished bool, err error) {
	gv, err := schema.ParseGroupVersion(t.APIVersion)
	if err != nil {
		return true, nil
	}
	mapping, err := member.Mapper.RESTMapping(gv.WithKind(t.Kind).GroupKind(), gv.Version)
	if err != nil {
		return true, nil // the member does not serve the kind: nothing there
	}
	ri := member.Dynamic.Resource(mapping.Resource).Namespace(t.Namespace)
	obj, err := ri.Get(ctx, t.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("cluster %s: reading %s %s/%s: %w", cluster, t.Kind, t.Namespace, t.Name, err)
	}
	if rec, ok := ownership.Of(obj); !ok || rec != t.Owner {
		return true, nil // no longer the copy that binding made
	}
	if t.HandBack || ownership.HandedOver(obj) {
		if err := r.handBack(ctx, nil, ri, obj, cluster); err != nil {
			return false, err
		}
	} else {
		keep, err := r.guardDeletion(ctx, nil, member, ri, obj, cluster)
		if errors.Is(err, errContentsLeft) {
			return false, nil // stays pending until what is under it is gone
		}
		if err != nil {
			return false, err
		}
		if keep {
			return true, nil
		}
		// Only the version read above goes; one changed since is read and
		// decided again on the next attempt (the error's backoff).
		if err := ownership.Delete(ctx, ri, obj, metav1.DeleteOptions{}); err != nil {
			return false, fmt.Errorf("cluster %s: withdrawing %s %s/%s: %w", cluster, t.Kind, t.Namespace, t.Name, err)
		}
	}
	klog.FromContext(ctx).V(1).Info("Pending withdrawal done", "cluster", cluster, "kind", t.Kind, "object", klog.KRef(t.Namespace, t.Name))
	return true, nil
}

func (r *reconciler) kindIsCluster() bool {
	ok := r.kind.clusterScoped()
	return ok
}
