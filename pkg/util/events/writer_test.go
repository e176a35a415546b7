package events

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
)

func template(name string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("u-" + name)},
	}
}

func TestWriterWritesEvents(t *testing.T) {
	cs := fake.NewClientset()
	w := NewWriter(cs.EventsV1(), clientgoscheme.Scheme, WriterOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = w.Start(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	w.Recorder("atoll-detector").Eventf(template("web"), nil, corev1.EventTypeNormal, ApplyPolicySucceed, "ApplyPolicy", "Apply %s succeed", "shop/pp")
	// A typed object without TypeMeta gets its kind from the scheme; a
	// cluster-scoped one has its event in default.
	w.Recorder("atoll-cluster-controller").AnnotatedEventf(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, nil,
		map[string]string{"a": "b"}, corev1.EventTypeWarning, "Seen", "Look", "%s", strings.Repeat("é", 600))

	var got map[string]corev1.ObjectReference
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		shop, _ := cs.EventsV1().Events("shop").List(ctx, metav1.ListOptions{})
		def, _ := cs.EventsV1().Events("default").List(ctx, metav1.ListOptions{})
		if len(shop.Items)+len(def.Items) < 2 {
			continue
		}
		got = map[string]corev1.ObjectReference{}
		for _, ev := range append(shop.Items, def.Items...) {
			got[ev.Reason] = ev.Regarding
			switch ev.Reason {
			case ApplyPolicySucceed:
				if ev.Note != "Apply shop/pp succeed" || ev.ReportingController != "atoll-detector" ||
					!strings.HasPrefix(ev.ReportingInstance, "atoll-detector-") || ev.Action != "ApplyPolicy" ||
					ev.Type != corev1.EventTypeNormal || ev.EventTime.IsZero() {
					t.Errorf("event written as %+v", ev)
				}
			case "Seen":
				if ev.Namespace != metav1.NamespaceDefault || ev.Annotations["a"] != "b" {
					t.Errorf("cluster-scoped event written as %+v", ev)
				}
				if len(ev.Note) > noteLimit || !strings.HasPrefix(ev.Note, "éé") || strings.ContainsRune(ev.Note, '\uFFFD') {
					t.Errorf("note not cut to %d bytes on a character boundary: %d bytes", noteLimit, len(ev.Note))
				}
			}
		}
		break
	}
	if got[ApplyPolicySucceed].Kind != "Deployment" || got[ApplyPolicySucceed].Name != "web" || got["Seen"].Kind != "Namespace" {
		t.Fatalf("events regarding %v", got)
	}
}

func TestWriterDropsRepeats(t *testing.T) {
	w := NewWriter(fake.NewClientset().EventsV1(), clientgoscheme.Scheme, WriterOptions{})
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	w.now = func() time.Time { return now }
	rec := w.Recorder("atoll-executor")
	before := testutil.ToFloat64(eventsTotal.WithLabelValues("repeated"))
	for range 3 {
		rec.Eventf(template("web"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "synced")
	}
	if len(w.queue) != 1 {
		t.Fatalf("%d events queued for three identical ones, want 1", len(w.queue))
	}
	if got := testutil.ToFloat64(eventsTotal.WithLabelValues("repeated")) - before; got != 2 {
		t.Errorf("repeated counted %v, want 2", got)
	}
	// A different note, object or controller is not a repeat.
	rec.Eventf(template("web"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "synced again")
	rec.Eventf(template("api"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "synced")
	w.Recorder("atoll-scheduler").Eventf(template("web"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "synced")
	if len(w.queue) != 4 {
		t.Fatalf("%d events queued, want 4", len(w.queue))
	}
	// After the window the same event is written again.
	now = now.Add(RepeatWindow)
	rec.Eventf(template("web"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "synced")
	if len(w.queue) != 5 {
		t.Fatalf("%d events queued after the repeat window, want 5", len(w.queue))
	}
}

// When the memory of written events is full, the oldest record goes: an
// event recorded since stays a repeat, the oldest one is written again;
// and a key written again after the repeat window is forgotten by its
// newer record, not by its stale first one.
func TestWriterForgetsTheOldestFirst(t *testing.T) {
	type step struct {
		note    string
		advance time.Duration // of the clock, before the event
		queued  bool
	}
	cases := map[string][]step{
		"oldest first": {
			{note: "a", queued: true},
			{note: "b", queued: true},
			{note: "b"}, // a repeat
			{note: "c", queued: true},
			{note: "d", queued: true}, // full: a, the oldest, is forgotten
			{note: "a", queued: true}, // so written again; b goes
			{note: "c"},               // still remembered
			{note: "b", queued: true},
		},
		"a stale record frees nothing": {
			{note: "a", queued: true},
			{note: "a", advance: RepeatWindow, queued: true}, // expired: written and recorded anew
			{note: "b", queued: true},
			{note: "c", queued: true}, // full: a's first record goes, a stays
			{note: "a"},               // remembered by its newer record
			{note: "d", queued: true}, // now a goes
			{note: "a", queued: true},
		},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			w := NewWriter(fake.NewClientset().EventsV1(), clientgoscheme.Scheme, WriterOptions{Recent: 3})
			now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
			w.now = func() time.Time { return now }
			rec := w.Recorder("atoll-executor")
			for i, s := range steps {
				now = now.Add(s.advance)
				queued := len(w.queue)
				rec.Eventf(template("web"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "%s", s.note)
				if got := len(w.queue) > queued; got != s.queued {
					t.Fatalf("step %d (%q): queued %t, want %t", i, s.note, got, s.queued)
				}
				if len(w.recent) > 3 || len(w.order) > 3 {
					t.Fatalf("step %d: %d keys and %d records remembered, want at most 3", i, len(w.recent), len(w.order))
				}
			}
		})
	}
}

// By default the writer remembers a burst's worth of events: one written
// before 10,000 others is still a repeat (decision 11's rule holds past a
// burst of 1,000 templates' eight events each).
func TestWriterRemembersABurst(t *testing.T) {
	w := NewWriter(fake.NewClientset().EventsV1(), clientgoscheme.Scheme, WriterOptions{QueueSize: 20000})
	rec := w.Recorder("atoll-detector")
	first := func() {
		rec.Eventf(template("web"), nil, corev1.EventTypeNormal, ApplyPolicySucceed, "ApplyPolicy", "Apply policy(ns/p) succeed")
	}
	first()
	for i := range 10000 {
		rec.Eventf(template(fmt.Sprintf("app-%d", i)), nil, corev1.EventTypeNormal, ApplyPolicySucceed, "ApplyPolicy", "Apply policy(ns/p) succeed")
	}
	queued := len(w.queue)
	first()
	if len(w.queue) != queued {
		t.Errorf("an event written 10,000 events earlier was written again")
	}
}

// --event-types: a type left out is neither queued nor remembered, and
// counts as suppressed.
func TestWriterRecordsOnlyItsTypes(t *testing.T) {
	for _, tc := range []struct {
		types          []string
		normal, warned bool
	}{{nil, true, true}, {[]string{"Warning"}, false, true}, {[]string{"Normal"}, true, false}, {[]string{}, false, false}} {
		w := NewWriter(fake.NewClientset().EventsV1(), clientgoscheme.Scheme, WriterOptions{Types: tc.types})
		rec := w.Recorder("atoll-executor")
		before := testutil.ToFloat64(eventsTotal.WithLabelValues("suppressed"))
		rec.Eventf(template("web"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "synced")
		rec.Eventf(template("web"), nil, corev1.EventTypeWarning, SyncWorkFailed, "Sync", "failed")
		var normal, warned bool
		for len(w.queue) > 0 {
			ev := <-w.queue
			normal = normal || ev.Type == corev1.EventTypeNormal
			warned = warned || ev.Type == corev1.EventTypeWarning
		}
		suppressed := testutil.ToFloat64(eventsTotal.WithLabelValues("suppressed")) - before
		wantSuppressed := 0
		for _, recorded := range []bool{tc.normal, tc.warned} {
			if !recorded {
				wantSuppressed++
			}
		}
		if normal != tc.normal || warned != tc.warned || suppressed != float64(wantSuppressed) || len(w.recent) != 2-wantSuppressed {
			t.Errorf("types %q: Normal written %t, Warning written %t, %v suppressed, %d remembered", tc.types, normal, warned, suppressed, len(w.recent))
		}
	}
}

func TestWriterBoundsQueueAndMemory(t *testing.T) {
	w := NewWriter(fake.NewClientset().EventsV1(), clientgoscheme.Scheme, WriterOptions{QueueSize: 10, Recent: 50})
	before := testutil.ToFloat64(eventsTotal.WithLabelValues("dropped"))
	rec := w.Recorder("atoll-detector")
	for i := range 200 {
		rec.Eventf(template("web"), nil, corev1.EventTypeNormal, ApplyPolicySucceed, "ApplyPolicy", "policy %d", i)
	}
	if len(w.queue) != 10 {
		t.Fatalf("%d events queued, want the queue's 10", len(w.queue))
	}
	if got := testutil.ToFloat64(eventsTotal.WithLabelValues("dropped")) - before; got != 190 {
		t.Errorf("dropped counted %v, want 190", got)
	}
	if len(w.recent) > 50 {
		t.Errorf("%d events remembered, want at most 50", len(w.recent))
	}
	// A dropped event is not remembered as written: once there is room
	// it is written.
	<-w.queue
	rec.Eventf(template("web"), nil, corev1.EventTypeNormal, ApplyPolicySucceed, "ApplyPolicy", "policy %d", 150)
	if len(w.queue) != 10 {
		t.Errorf("a dropped event was taken for a repeat")
	}
}

func TestWriterRejectsBadEvents(t *testing.T) {
	w := NewWriter(fake.NewClientset().EventsV1(), clientgoscheme.Scheme, WriterOptions{})
	rec := w.Recorder("atoll-detector")
	rec.Eventf(template("web"), nil, "Fatal", "Bad", "Look", "unsupported type")
	rec.Eventf(&struct{ metav1.PartialObjectMetadata }{}, nil, corev1.EventTypeNormal, "Bad", "Look", "no kind")
	if len(w.queue) != 0 {
		t.Fatalf("%d bad events queued", len(w.queue))
	}
}

// BenchmarkRecordWhenFull records distinct events into a writer whose
// memory of written events is full (4,096 here, the default before
// session 36), as in a burst of new templates: the cost of deciding that
// an event is not a repeat. The queue has room for every event (a dropped
// one is not remembered).
func BenchmarkRecordWhenFull(b *testing.B) {
	w := NewWriter(fake.NewClientset().EventsV1(), clientgoscheme.Scheme, WriterOptions{QueueSize: 4096 + b.N, Recent: 4096})
	rec := w.Recorder("atoll-executor")
	for i := range 4096 {
		rec.Eventf(template("web"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "fill %d", i)
	}
	b.ResetTimer()
	for i := range b.N {
		rec.Eventf(template("web"), nil, corev1.EventTypeNormal, SyncWorkSucceed, "Sync", "event %d", i)
	}
}
