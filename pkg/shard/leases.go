package shard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels and annotations of the shard and member Leases.
const (
	// GroupLabel says which controller-manager group a Lease belongs to
	// (the leader election ID).
	GroupLabel = "shards.atoll.dev/group"
	// RoleLabel is "shard" for a shard's Lease, "member" for a process's
	// presence Lease.
	RoleLabel = "shards.atoll.dev/role"
	// ShardAnnotation is the index of a shard Lease's shard.
	ShardAnnotation = "shards.atoll.dev/shard"
	// CountAnnotation is the --shards of the process that wrote a shard
	// Lease: processes with different counts would split differently.
	CountAnnotation = "shards.atoll.dev/count"
	// IdentityAnnotation is the full identity of a member Lease's process
	// (the Lease's name carries only its hash).
	IdentityAnnotation = "shards.atoll.dev/identity"
)

// Timing of the Leases, as client-go leader election's: a holder renews
// every RetryPeriod, gives a shard up when it could not renew for
// RenewDeadline, and others take a shard whose Lease did not change for
// LeaseDuration (measured on their own clock, so clocks need not agree).
type Timing struct {
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// DefaultTiming is controller-runtime's leader election timing.
var DefaultTiming = Timing{LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}

// ShardLeaseName is the Lease of shard s of group.
func ShardLeaseName(group string, s int) string { return group + "-shard-" + strconv.Itoa(s) }

// memberLeaseName is the presence Lease of a process.
func memberLeaseName(group, identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return group + "-member-" + hex.EncodeToString(sum[:6])
}

// Leases holds shards for Owner: every RetryPeriod it renews its Leases and
// its presence Lease, counts the live processes (presence Leases renewed
// within LeaseDuration), and holds its fair share, ceil(shards/processes):
// it takes free or expired shards while below it and hands back its
// highest shards (after their work in flight is done) while above it, so
// a new process gets work within seconds and a dead one's shards move
// once its Leases expire. It runs on every process (no leader election).
//
// Losing a shard it still thought it held (another process took it, or no
// renewal for RenewDeadline) stops the process: Start returns an error,
// as controller-runtime does when its leader Lease is lost.
type Leases struct {
	Owner     *Owner
	Client    client.Client // writes
	Reader    client.Reader // lists, uncached
	Namespace string
	Group     string
	Identity  string
	Timing    Timing
	Clock     clock.WithTicker

	seen     map[string]observed
	held     map[int]*heldLease
	draining map[int]bool
	drained  chan int
	lastSeen time.Time // last successful list
}

// observed is when this process last saw a Lease change.
type observed struct {
	rv string
	at time.Time
}

type heldLease struct {
	lease   *coordinationv1.Lease
	renewed time.Time
}

// NeedLeaderElection implements manager.LeaderElectionRunnable.
func (l *Leases) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable.
func (l *Leases) Start(ctx context.Context) error {
	l.init()
	log := klog.FromContext(ctx).WithName("shards").WithValues("identity", l.Identity)
	ctx = klog.NewContext(ctx, log)
	log.Info("Holding shards", "shards", l.Owner.Shards(), "namespace", l.Namespace, "group", l.Group)
	tick := l.Clock.NewTicker(l.Timing.RetryPeriod)
	defer tick.Stop()
	for {
		if err := l.step(ctx); err != nil {
			l.stop(ctx, false)
			return err
		}
		select {
		case <-ctx.Done():
			l.stop(ctx, true)
			return nil
		case <-tick.C():
		case s := <-l.drained:
			l.release(ctx, s)
		}
	}
}

func (l *Leases) init() {
	if l.Clock == nil {
		l.Clock = clock.RealClock{}
	}
	if l.Timing == (Timing{}) {
		l.Timing = DefaultTiming
	}
	l.seen, l.held, l.draining = map[string]observed{}, map[int]*heldLease{}, map[int]bool{}
	l.drained = make(chan int, l.Owner.Shards())
	l.lastSeen = l.Clock.Now()
	for s := range l.Owner.Shards() {
		setHeld(s, false)
	}
}

// step is one round: observe, renew, then hand back or take shards.
func (l *Leases) step(ctx context.Context) error {
	now := l.Clock.Now()
	var list coordinationv1.LeaseList
	if err := l.Reader.List(ctx, &list, client.InNamespace(l.Namespace), client.MatchingLabels{GroupLabel: l.Group}); err != nil {
		if len(l.held) > 0 && now.Sub(l.lastSeen) > l.Timing.RenewDeadline {
			return fmt.Errorf("shards %v: no renewal for %s: %w", l.Owner.heldShards(), l.Timing.RenewDeadline, err)
		}
		klog.FromContext(ctx).V(1).Info("Listing shard Leases failed", "err", err.Error())
		return nil
	}
	l.lastSeen = now
	shards, members := l.observe(list.Items, now)
	if err := l.checkCount(shards); err != nil {
		return err
	}
	if err := l.renew(ctx, shards, now); err != nil {
		return err
	}
	l.renewMember(ctx, members, now)
	share := fairShare(l.Owner.Shards(), l.liveMembers(members, now))
	kept := len(l.held) - len(l.draining)
	for _, s := range l.toHandBack(kept - share) {
		l.handBack(ctx, s)
	}
	for s := 0; s < l.Owner.Shards() && kept < share; s++ {
		if _, mine := l.held[s]; mine || !l.free(shards[s], now) {
			continue
		}
		if l.take(ctx, s, shards[s], now) {
			kept++
		}
	}
	return nil
}

// observe records when each Lease last changed and sorts them into shard
// Leases by index and presence Leases.
func (l *Leases) observe(items []coordinationv1.Lease, now time.Time) (map[int]*coordinationv1.Lease, []*coordinationv1.Lease) {
	shards := map[int]*coordinationv1.Lease{}
	var members []*coordinationv1.Lease
	names := map[string]bool{}
	for i := range items {
		le := &items[i]
		names[le.Name] = true
		if o, ok := l.seen[le.Name]; !ok || o.rv != le.ResourceVersion {
			l.seen[le.Name] = observed{rv: le.ResourceVersion, at: now}
		}
		switch le.Labels[RoleLabel] {
		case "shard":
			if s, err := strconv.Atoi(le.Annotations[ShardAnnotation]); err == nil {
				shards[s] = le
			}
		case "member":
			members = append(members, le)
		}
	}
	for name := range l.seen {
		if !names[name] {
			delete(l.seen, name)
		}
	}
	return shards, members
}

// expired: the Lease did not change for its duration, on this clock.
func (l *Leases) expired(le *coordinationv1.Lease, now time.Time) bool {
	d := l.Timing.LeaseDuration
	if le.Spec.LeaseDurationSeconds != nil {
		d = time.Duration(*le.Spec.LeaseDurationSeconds) * time.Second
	}
	return now.Sub(l.seen[le.Name].at) > d
}

func holder(le *coordinationv1.Lease) string {
	if le == nil || le.Spec.HolderIdentity == nil {
		return ""
	}
	return *le.Spec.HolderIdentity
}

// free: nobody holds the shard, or its holder stopped renewing.
func (l *Leases) free(le *coordinationv1.Lease, now time.Time) bool {
	return le == nil || holder(le) == "" || (holder(le) != l.Identity && l.expired(le, now))
}

// checkCount refuses to run beside a live process that splits into a
// different number of shards: the two would own overlapping templates.
func (l *Leases) checkCount(shards map[int]*coordinationv1.Lease) error {
	want := strconv.Itoa(l.Owner.Shards())
	for s, le := range shards {
		if h := holder(le); h != "" && h != l.Identity && le.Annotations[CountAnnotation] != want && !l.expired(le, l.Clock.Now()) {
			return fmt.Errorf("--shards %s: shard %d's Lease %s/%s is held by %s, which runs with --shards %s; every controller-manager of a group must use the same --shards",
				want, s, l.Namespace, le.Name, h, le.Annotations[CountAnnotation])
		}
	}
	return nil
}

// liveMembers counts the processes present, this one included.
func (l *Leases) liveMembers(members []*coordinationv1.Lease, now time.Time) int {
	n := 1
	for _, m := range members {
		if holder(m) != "" && holder(m) != l.Identity && !l.expired(m, now) {
			n++
		}
	}
	return n
}

// fairShare is ceil(shards / processes).
func fairShare(shards, processes int) int { return (shards + processes - 1) / max(processes, 1) }

// toHandBack picks n held shards to hand back: the highest first, so that
// processes settle on a stable split.
func (l *Leases) toHandBack(n int) []int {
	if n <= 0 {
		return nil
	}
	var mine []int
	for s := range l.held {
		if !l.draining[s] {
			mine = append(mine, s)
		}
	}
	slices.Sort(mine)
	slices.Reverse(mine)
	return mine[:min(n, len(mine))]
}

// renew renews every held shard; one another process holds now is lost.
func (l *Leases) renew(ctx context.Context, shards map[int]*coordinationv1.Lease, now time.Time) error {
	for s, h := range l.held {
		le := shards[s]
		if le == nil || holder(le) != l.Identity {
			return fmt.Errorf("shard %d: Lease %s/%s is now held by %q", s, l.Namespace, ShardLeaseName(l.Group, s), holder(le))
		}
		next := le.DeepCopy()
		next.Spec.RenewTime = &metav1.MicroTime{Time: now}
		err := l.Client.Update(ctx, next)
		switch {
		case err == nil:
			h.lease, h.renewed = next, now
		case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
			return fmt.Errorf("shard %d: Lease %s/%s changed under its holder: %w", s, l.Namespace, le.Name, err)
		case now.Sub(h.renewed) > l.Timing.RenewDeadline:
			return fmt.Errorf("shard %d: no renewal for %s: %w", s, l.Timing.RenewDeadline, err)
		default:
			klog.FromContext(ctx).V(1).Info("Renewing a shard Lease failed", "shard", s, "err", err.Error())
		}
	}
	return nil
}

// renewMember keeps this process's presence Lease fresh and deletes
// presence Leases of processes gone for long.
func (l *Leases) renewMember(ctx context.Context, members []*coordinationv1.Lease, now time.Time) {
	name := memberLeaseName(l.Group, l.Identity)
	var mine *coordinationv1.Lease
	for _, m := range members {
		switch {
		case m.Name == name:
			mine = m
		case now.Sub(l.seen[m.Name].at) > 20*l.Timing.LeaseDuration:
			rv := m.ResourceVersion
			_ = l.Client.Delete(ctx, m, client.Preconditions{ResourceVersion: &rv})
		}
	}
	var err error
	if mine == nil {
		err = l.Client.Create(ctx, l.newLease(name, "member", -1, now))
	} else {
		next := mine.DeepCopy()
		next.Spec.HolderIdentity = &l.Identity
		next.Spec.RenewTime = &metav1.MicroTime{Time: now}
		err = l.Client.Update(ctx, next)
	}
	if err != nil {
		klog.FromContext(ctx).V(1).Info("Renewing the presence Lease failed", "err", err.Error())
	}
}

func (l *Leases) newLease(name, role string, s int, now time.Time) *coordinationv1.Lease {
	secs := int32(l.Timing.LeaseDuration / time.Second)
	le := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: name,
			Labels:      map[string]string{GroupLabel: l.Group, RoleLabel: role},
			Annotations: map[string]string{}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &l.Identity, LeaseDurationSeconds: &secs,
			AcquireTime: &metav1.MicroTime{Time: now}, RenewTime: &metav1.MicroTime{Time: now}},
	}
	if role == "shard" {
		le.Annotations[ShardAnnotation] = strconv.Itoa(s)
		le.Annotations[CountAnnotation] = strconv.Itoa(l.Owner.Shards())
	} else {
		le.Annotations[IdentityAnnotation] = l.Identity
	}
	return le
}

// take acquires shard s (its Lease le may be nil) and starts its work.
func (l *Leases) take(ctx context.Context, s int, le *coordinationv1.Lease, now time.Time) bool {
	var err error
	prev := holder(le)
	next := l.newLease(ShardLeaseName(l.Group, s), "shard", s, now)
	if le == nil {
		err = l.Client.Create(ctx, next)
	} else {
		transitions := ptrValue(le.Spec.LeaseTransitions)
		if prev != l.Identity {
			transitions++
		}
		le = le.DeepCopy()
		le.Labels, le.Annotations = next.Labels, next.Annotations
		le.Spec = next.Spec
		le.Spec.LeaseTransitions = &transitions
		next = le
		err = l.Client.Update(ctx, next)
	}
	if err != nil {
		// Another process was quicker (conflict, already exists), or the
		// API server failed: try again next round.
		klog.FromContext(ctx).V(1).Info("Taking a shard failed", "shard", s, "err", err.Error())
		return false
	}
	l.held[s] = &heldLease{lease: next, renewed: now}
	l.Owner.gain(s)
	setHeld(s, true)
	transitions.WithLabelValues("taken").Inc()
	klog.FromContext(ctx).Info("Shard taken", "shard", s, "from", prev)
	return true
}

// handBack stops new work on s and, once the work in flight is done,
// releases its Lease (release, through drained).
func (l *Leases) handBack(ctx context.Context, s int) {
	l.draining[s] = true
	l.Owner.drop(s)
	setHeld(s, false)
	transitions.WithLabelValues("handed_back").Inc()
	klog.FromContext(ctx).Info("Handing a shard back", "shard", s)
	go func() {
		l.Owner.wait(s)
		l.drained <- s
	}()
}

// release clears the holder of a drained shard's Lease, so that another
// process takes it at once rather than after it expires.
func (l *Leases) release(ctx context.Context, s int) {
	h := l.held[s]
	delete(l.held, s)
	delete(l.draining, s)
	if h == nil {
		return
	}
	next := h.lease.DeepCopy()
	next.Spec.HolderIdentity = ptr("")
	next.Spec.RenewTime = &metav1.MicroTime{Time: l.Clock.Now()}
	if err := l.Client.Update(ctx, next); err != nil {
		// It expires instead.
		klog.FromContext(ctx).V(1).Info("Releasing a shard Lease failed", "shard", s, "err", err.Error())
		return
	}
	klog.FromContext(ctx).Info("Shard handed back", "shard", s)
}

// stop gives every shard up. On a clean stop (ctx ended) the work in
// flight gets a few seconds to finish and the Leases are released, so a
// restart hands over at once; after a lost Lease nothing is released.
func (l *Leases) stop(ctx context.Context, clean bool) {
	shards := l.Owner.heldShards()
	for _, s := range shards {
		l.Owner.drop(s)
		setHeld(s, false)
	}
	if !clean {
		transitions.WithLabelValues("lost").Add(float64(len(shards)))
		return
	}
	done := make(chan struct{})
	go func() {
		for _, s := range shards {
			l.Owner.wait(s)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(l.Timing.RenewDeadline):
		klog.FromContext(ctx).Info("Work in flight did not finish; shard Leases left to expire", "shards", shards)
		return
	}
	// ctx has ended: release with a short context of its own.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	for _, s := range shards {
		l.release(rctx, s)
	}
	member := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: l.Namespace, Name: memberLeaseName(l.Group, l.Identity)}}
	if err := l.Client.Delete(rctx, member); err != nil && !apierrors.IsNotFound(err) {
		klog.FromContext(ctx).V(1).Info("Deleting the presence Lease failed", "err", err.Error())
	}
}

// Identity is a process identity for the Leases: host name and a random
// suffix, as client-go leader election uses.
func Identity(hostname, suffix string) (string, error) {
	if hostname == "" || suffix == "" {
		return "", errors.New("shard identity: host name and suffix must not be empty")
	}
	return strings.ToLower(hostname) + "_" + suffix, nil
}

func ptr[T any](v T) *T { return &v }

func ptrValue(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
