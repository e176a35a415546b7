package events

import (
	"context"
	"fmt"
	"hash/maphash"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	eventsclient "k8s.io/client-go/kubernetes/typed/events/v1"
	"k8s.io/client-go/tools/reference"
	"k8s.io/klog/v2"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/atoll-dev/atoll/pkg/util/text"
)

// Writer writes the events of every controller of one process through a
// queue of fixed size. client-go's events broadcaster, which
// controller-runtime's recorders use, starts a goroutine per event that
// waits for the client's rate limiter, and keeps every event it wrote for
// 6 to 12 minutes to spot repeats: a burst of new templates (8 events
// each) turns into memory that grows with the burst, 800,000 queued
// events for 100,000 templates (issue 14). Events are best effort, as in
// Kubernetes: when the queue is full an event is dropped and counted, as
// client-go's older recorder drops past 1,000 queued; an event identical
// to one written within the last RepeatWindow is not written again.
type Writer struct {
	client  eventsclient.EventsV1Interface
	scheme  *runtime.Scheme
	host    string
	queue   chan *eventsv1.Event
	workers int
	now     func() time.Time
	mu      sync.Mutex
	// recent maps the digest of each event written within RepeatWindow
	// (see digest) to when it was, in Unix nanoseconds: 16 bytes an
	// event, not the event's strings, so the memory can hold a burst's
	// worth of events.
	recent map[uint64]int64
	seed   maphash.Seed
	// order holds the records in the order they were written, at most
	// maxRecent (a ring from head): the oldest record is the one
	// forgotten when a new one needs room, in constant time.
	order     []recorded
	head      int
	maxRecent int
	// types are the event types recorded; others are suppressed.
	types map[string]bool
}

// WriterOptions size a Writer; zero values take the defaults.
type WriterOptions struct {
	QueueSize int // events waiting to be written; 4,096 by default (about 4 MB)
	Workers   int // concurrent writes; 4 by default (the client's rate limiter is the real bound)
	Recent    int // events remembered to drop repeats; 65,536 by default (about 2.5 MB)
	// Types are the event types to record (Normal, Warning); others are
	// not written and count as suppressed. Nil records both; empty none.
	Types []string
}

// RepeatWindow is how long an identical event is not written again.
const RepeatWindow = 10 * time.Minute

// noteLimit is the events.k8s.io/v1 validation limit on note, in bytes.
const noteLimit = 1024

// recorded is one entry of Writer.order: an event's digest and when it
// was written (an event written again later has a newer entry; the older
// one is stale).
type recorded struct {
	digest uint64
	at     int64
}

type eventKey struct {
	controller, eventType, reason, action, note string
	kind, namespace, name                       string
	uid                                         string
}

var eventsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "atoll_events_total",
	Help: "Events by result: written, repeated (identical to one written within the repeat window, not written), suppressed (of a type --event-types leaves out), dropped (queue full), failed (the API server refused it).",
}, []string{"result"})

func init() { ctrlmetrics.Registry.MustRegister(eventsTotal) }

// NewWriter returns a Writer that writes through client; scheme names the
// kinds of typed objects events are recorded on. Start it (it is a
// manager Runnable) for the queue to drain.
func NewWriter(client eventsclient.EventsV1Interface, scheme *runtime.Scheme, opts WriterOptions) *Writer {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Recent <= 0 {
		opts.Recent = 1 << 16
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "atoll"
	}
	types := map[string]bool{corev1.EventTypeNormal: true, corev1.EventTypeWarning: true}
	if opts.Types != nil {
		types = map[string]bool{}
		for _, t := range opts.Types {
			types[t] = true
		}
	}
	return &Writer{client: client, scheme: scheme, host: host, queue: make(chan *eventsv1.Event, opts.QueueSize),
		workers: opts.Workers, now: time.Now, recent: map[uint64]int64{}, seed: maphash.MakeSeed(), maxRecent: opts.Recent, types: types}
}

// NeedLeaderElection is false: any process may have events to write.
func (w *Writer) NeedLeaderElection() bool { return false }

// Start writes queued events until ctx ends; what is still queued then is
// dropped, as client-go's broadcaster drops it on shutdown.
func (w *Writer) Start(ctx context.Context) error {
	var wg sync.WaitGroup
	for range w.workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-w.queue:
					w.write(ctx, ev)
				}
			}
		})
	}
	wg.Wait()
	return nil
}

func (w *Writer) write(ctx context.Context, ev *eventsv1.Event) {
	_, err := w.client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
	if err != nil {
		eventsTotal.WithLabelValues("failed").Inc()
		// A namespace being deleted or an object gone refuses events;
		// they are not worth retrying (the next change records anew).
		if !apierrors.IsAlreadyExists(err) && ctx.Err() == nil {
			klog.V(2).InfoS("Event not written", "reason", ev.Reason, "object", klog.KRef(ev.Regarding.Namespace, ev.Regarding.Name), "err", err)
		}
		return
	}
	eventsTotal.WithLabelValues("written").Inc()
}

// Recorder returns the recorder for the controller called name (the
// events' reportingController).
func (w *Writer) Recorder(name string) recorder.EventRecorder {
	return &writerRecorder{w: w, controller: name, instance: name + "-" + w.host}
}

type writerRecorder struct {
	w                    *Writer
	controller, instance string
}

func (r *writerRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.w.record(r, regarding, related, nil, eventtype, reason, action, note, args...)
}

func (r *writerRecorder) AnnotatedEventf(regarding, related runtime.Object, annotations map[string]string, eventtype, reason, action, note string, args ...any) {
	r.w.record(r, regarding, related, annotations, eventtype, reason, action, note, args...)
}

func (w *Writer) record(r *writerRecorder, regarding, related runtime.Object, annotations map[string]string,
	eventtype, reason, action, note string, args ...any) {
	if eventtype != corev1.EventTypeNormal && eventtype != corev1.EventTypeWarning {
		klog.ErrorS(nil, "Event not recorded: unsupported type", "type", eventtype, "reason", reason)
		return
	}
	if !w.types[eventtype] {
		eventsTotal.WithLabelValues("suppressed").Inc()
		return
	}
	ref, err := reference.GetReference(w.scheme, regarding)
	if err != nil {
		klog.ErrorS(err, "Event not recorded: no reference to its object", "reason", reason)
		return
	}
	var relatedRef *corev1.ObjectReference
	if related != nil {
		relatedRef, _ = reference.GetReference(w.scheme, related)
	}
	message := text.Truncate(fmt.Sprintf(note, args...), noteLimit)
	now := w.now()
	key := eventKey{controller: r.controller, eventType: eventtype, reason: reason, action: action, note: message,
		kind: ref.Kind, namespace: ref.Namespace, name: ref.Name, uid: string(ref.UID)}
	if w.repeated(key, now) {
		eventsTotal.WithLabelValues("repeated").Inc()
		return
	}
	namespace := ref.Namespace
	if namespace == "" {
		namespace = metav1.NamespaceDefault
	}
	ev := &eventsv1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", ref.Name, now.UnixNano()), Namespace: namespace,
			Annotations: annotations},
		EventTime:           metav1.NewMicroTime(now),
		ReportingController: r.controller,
		ReportingInstance:   r.instance,
		Action:              action,
		Reason:              reason,
		Regarding:           *ref,
		Related:             relatedRef,
		Note:                message,
		Type:                eventtype,
	}
	select {
	case w.queue <- ev:
	default:
		w.forget(key) // not written, so not a repeat next time
		eventsTotal.WithLabelValues("dropped").Inc()
	}
}

// repeated reports whether key was recorded within RepeatWindow, and
// remembers it as recorded now when not. The memory is bounded: when full,
// the oldest record goes (the first to expire). It used to look through
// every remembered key for expired ones on each new event once full, which
// in a burst of thousands of new templates was most of the time.
func (w *Writer) repeated(key eventKey, now time.Time) bool {
	d, at := w.digest(key), now.UnixNano()
	w.mu.Lock()
	defer w.mu.Unlock()
	if last, ok := w.recent[d]; ok && at-last < int64(RepeatWindow) {
		return true
	}
	if len(w.order) < w.maxRecent {
		w.order = append(w.order, recorded{d, at})
	} else {
		oldest := w.order[w.head]
		if last, ok := w.recent[oldest.digest]; ok && last == oldest.at {
			delete(w.recent, oldest.digest)
		}
		w.order[w.head] = recorded{d, at}
		w.head = (w.head + 1) % len(w.order)
	}
	w.recent[d] = at
	return false
}

func (w *Writer) forget(key eventKey) {
	d := w.digest(key)
	w.mu.Lock()
	delete(w.recent, d)
	w.mu.Unlock()
}

// digest identifies an event by a 64-bit hash of its key, seeded per
// writer. Two different events with the same digest would make the second
// a repeat: with 65,536 remembered, about one event in 3×10^14.
func (w *Writer) digest(key eventKey) uint64 {
	return maphash.Comparable(w.seed, key)
}
