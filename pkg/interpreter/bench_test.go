package interpreter

import (
	"context"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/atoll-dev/atoll/pkg/interpreter/script"
)

// BenchmarkRenderNative renders a Deployment share with a customization
// registry that has nothing for the kind (the common case).
func BenchmarkRenderNative(b *testing.B) {
	i := New(NewCustomizations(staticSource{}, script.DefaultLimits))
	ctx := context.Background()
	tpl := deploymentTemplate()
	for b.Loop() {
		if _, err := i.Render(ctx, tpl, ptr.To[int64](2)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderCustomized renders a Rollout share through its
// customization's ReviseReplica script (a fresh Lua state per call).
func BenchmarkRenderCustomized(b *testing.B) {
	i := New(NewCustomizations(staticSource{loadCustomization(b, "rollout-customization.yaml")}, script.DefaultLimits))
	ctx := context.Background()
	tpl := rollout(5)
	for b.Loop() {
		if _, err := i.Render(ctx, tpl, ptr.To[int64](2)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHealthCustomized interprets a member Rollout's health by script.
func BenchmarkHealthCustomized(b *testing.B) {
	i := New(NewCustomizations(staticSource{loadCustomization(b, "rollout-customization.yaml")}, script.DefaultLimits))
	ctx := context.Background()
	obs := rollout(5)
	obs.Object["status"] = map[string]any{"readyReplicas": int64(5)}
	for b.Loop() {
		if _, err := i.Health(ctx, obs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompare is what the executor does for every member copy it
// finds current, after a restart for all of them: render the share, hash
// it, and check the copy for drift.
func BenchmarkCompare(b *testing.B) {
	i := New(NewCustomizations(staticSource{}, script.DefaultLimits))
	ctx := context.Background()
	tpl := deploymentTemplate()
	live, err := i.Render(ctx, tpl, ptr.To[int64](2))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		desired, err := i.Render(ctx, tpl, ptr.To[int64](2))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Hash(desired); err != nil {
			b.Fatal(err)
		}
		if drifted, path := Drifted(desired, live); drifted {
			b.Fatalf("drifted at %s", path)
		}
	}
}
