package world

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/atoll-dev/atoll/pkg/sim/simdir"
)

func writeRaw(path, content string) error { return os.WriteFile(path, []byte(content), 0o600) }

func TestSetLoad(t *testing.T) {
	type step struct {
		app   string
		milli int64
	}
	cases := map[string]struct {
		steps     []step
		want      simdir.Loads
		wantError string
	}{
		"first load creates the file": {
			steps: []step{{"web", 500}},
			want:  simdir.Loads{"web": 500},
		},
		"apps are kept side by side": {
			steps: []step{{"web", 500}, {"db", 200}, {"web", 800}},
			want:  simdir.Loads{"web": 800, "db": 200},
		},
		"zero removes the app": {
			steps: []step{{"web", 500}, {"db", 200}, {"web", 0}},
			want:  simdir.Loads{"db": 200},
		},
		"zero for an unknown app is a no-op": {
			steps: []step{{"web", 0}},
			want:  simdir.Loads{},
		},
		"empty app": {
			steps:     []step{{"", 500}},
			wantError: "invalid app name",
		},
		"app with a space": {
			steps:     []step{{"my app", 500}},
			wantError: `invalid app name "my app"`,
		},
		"app starting with a dash": {
			steps:     []step{{"-web", 500}},
			wantError: `invalid app name "-web"`,
		},
		"app too long for a label value": {
			steps:     []step{{strings.Repeat("a", 64), 500}},
			wantError: "invalid app name",
		},
		"negative load": {
			steps:     []step{{"web", -1}},
			wantError: "must not be negative",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			var err error
			for _, s := range tc.steps {
				if err = SetLoad(dir, s.app, s.milli); err != nil {
					break
				}
			}
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("SetLoad error = %v, want one containing %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadLoads(dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("loads (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSetLoadConcurrentUpdatesKeepAllApps(t *testing.T) {
	dir := t.TempDir()
	const apps, rounds = 8, 5
	want := simdir.Loads{}
	var wg sync.WaitGroup
	errs := make(chan error, apps*rounds)
	for i := range apps {
		app := fmt.Sprintf("app-%d", i)
		want[app] = int64(100*i + rounds)
		wg.Go(func() {
			for r := 1; r <= rounds; r++ {
				if err := SetLoad(dir, app, int64(100*i+r)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := ReadLoads(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loads after concurrent updates (-want +got):\n%s", diff)
	}
}

func TestPublishReady(t *testing.T) {
	dir := t.TempDir()
	if err := PublishReady(dir, "a", map[string]int{"web": 3}, t0); err != nil {
		t.Fatal(err)
	}
	if err := PublishReady(dir, "a", map[string]int{"web": 3}, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	var got simdir.ReadyReport
	if _, err := simdir.ReadJSON(simdir.ReadyFile(dir, "a"), &got); err != nil {
		t.Fatal(err)
	}
	want := simdir.ReadyReport{Time: t0.Add(time.Second), Apps: map[string]int{"web": 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if err := PublishReady(dir, "../x", nil, t0); err == nil {
		t.Error("PublishReady accepted member ../x")
	}
}

// pod is a small builder for the pods of these tests.
type pod struct{ corev1.Pod }

func makePod(name string) *pod {
	return &pod{corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}}
}

func (p *pod) app(app string) *pod {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[AppLabel] = app
	return p
}

func (p *pod) ready() *pod {
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue})
	return p
}

func (p *pod) running() *pod {
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse})
	return p
}

func (p *pod) terminating() *pod {
	now := metav1.NewTime(t0)
	p.DeletionTimestamp = &now
	return p
}

// container adds a container with requests and limits given as
// "cpu=100m,memory=64Mi".
func (p *pod) container(requests, limits string) *pod {
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{
		Name:      fmt.Sprintf("c%d", len(p.Spec.Containers)),
		Resources: corev1.ResourceRequirements{Requests: resources(requests), Limits: resources(limits)},
	})
	return p
}

func (p *pod) obj() *corev1.Pod { return &p.Pod }

func resources(s string) corev1.ResourceList {
	if s == "" {
		return nil
	}
	list := corev1.ResourceList{}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, _ := strings.Cut(kv, "=")
		list[corev1.ResourceName(k)] = resource.MustParse(v)
	}
	return list
}

func TestCapCPU(t *testing.T) {
	cases := map[string]struct {
		pod   *corev1.Pod
		milli int64
		want  int64
	}{
		"all containers limited caps at the limit sum": {
			pod:   makePod("p").container("cpu=100m", "cpu=300m").container("", "cpu=200m").obj(),
			milli: 2000,
			want:  500,
		},
		"under the limits is unchanged": {
			pod:   makePod("p").container("cpu=100m", "cpu=300m").obj(),
			milli: 250,
			want:  250,
		},
		"one container without a limit caps at 4x requests": {
			pod:   makePod("p").container("cpu=100m", "cpu=300m").container("cpu=50m", "").obj(),
			milli: 2000,
			want:  600,
		},
		"requests only": {
			pod:   makePod("p").container("cpu=250m", "memory=1Gi").obj(),
			milli: 5000,
			want:  1000,
		},
		"no requests and no limits is uncapped": {
			pod:   makePod("p").container("memory=64Mi", "").obj(),
			milli: 5000,
			want:  5000,
		},
		"no containers is uncapped": {
			pod:   makePod("p").obj(),
			milli: 5000,
			want:  5000,
		},
		"zero stays zero": {
			pod:   makePod("p").container("cpu=100m", "cpu=300m").obj(),
			milli: 0,
			want:  0,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, CapCPU(tc.pod, tc.milli)); diff != "" {
				t.Errorf("CapCPU(-want +got):\n%s", diff)
			}
		})
	}
}

func TestMemoryUsage(t *testing.T) {
	cases := map[string]struct {
		pod  *corev1.Pod
		want int64
	}{
		"half the request": {
			pod:  makePod("p").container("memory=128Mi", "memory=1Gi").obj(),
			want: 64 << 20,
		},
		"half the limit without a request": {
			pod:  makePod("p").container("cpu=1", "memory=256Mi").obj(),
			want: 128 << 20,
		},
		"default without either, summed over containers": {
			pod:  makePod("p").container("memory=128Mi", "").container("", "").obj(),
			want: 64<<20 + DefaultContainerMemory,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MemoryUsage(tc.pod)); diff != "" {
				t.Errorf("MemoryUsage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCountReady(t *testing.T) {
	pods := []*corev1.Pod{
		makePod("web-1").app("web").ready().obj(),
		makePod("web-2").app("web").ready().obj(),
		makePod("web-3").app("web").running().obj(),
		makePod("web-4").app("web").ready().terminating().obj(),
		makePod("web-5").app("web").obj(),
		makePod("db-1").app("db").ready().obj(),
		makePod("other").ready().obj(),
	}
	want := map[string]int{"web": 2, "db": 1}
	if diff := cmp.Diff(want, CountReady(pods)); diff != "" {
		t.Errorf("CountReady (-want +got):\n%s", diff)
	}
}

func TestViewPodUsage(t *testing.T) {
	dir := t.TempDir()
	writeWorld(t, dir, simdir.Loads{"web": 3000}, map[string]report{
		"a": {apps: map[string]int{"web": 2}},
	}, nil)
	v := NewView(dir, "a", clocktesting.NewFakePassiveClock(t0))
	cases := map[string]struct {
		pod  *corev1.Pod
		want corev1.ResourceList
	}{
		"ready pod gets its share capped at 4x requests": {
			pod:  makePod("web-1").app("web").ready().container("cpu=250m,memory=100Mi", "").obj(),
			want: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("50Mi")},
		},
		"ready pod without requests gets its whole share": {
			pod:  makePod("web-1").app("web").ready().container("", "").obj(),
			want: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		},
		"pod that is not ready uses no CPU": {
			pod:  makePod("web-3").app("web").running().container("", "").obj(),
			want: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("0"), corev1.ResourceMemory: resource.MustParse("32Mi")},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := v.PodUsage(tc.pod)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("PodUsage (-want +got):\n%s", diff)
			}
		})
	}
}
