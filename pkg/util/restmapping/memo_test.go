package restmapping

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// counting is a RESTMapper whose scope for a kind can change, counting the
// questions it answers.
type counting struct {
	meta.RESTMapper
	asked  int
	resets int
	scope  meta.RESTScope
	fail   bool
}

func (c *counting) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.asked++
	if c.fail {
		return nil, &meta.NoKindMatchError{GroupKind: gk, SearchedVersions: versions}
	}
	v := "v1"
	if len(versions) > 0 {
		v = versions[0]
	}
	return &meta.RESTMapping{
		Resource:         schema.GroupVersionResource{Group: gk.Group, Version: v, Resource: "widgets"},
		GroupVersionKind: gk.WithVersion(v),
		Scope:            c.scope,
	}, nil
}

func (c *counting) Reset() { c.resets++ }

func TestMemoRemembersUntilAQuestionFails(t *testing.T) {
	d := &counting{scope: meta.RESTScopeNamespace}
	m := Memoize(d)
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	for range 3 {
		got, err := m.RESTMapping(gk, "v1")
		if err != nil || got.Resource.Version != "v1" || got.Scope != meta.RESTScopeNamespace {
			t.Fatalf("RESTMapping = %+v, %v", got, err)
		}
		got.Resource.Resource = "changed by a caller" // must not reach the memory
	}
	if _, err := m.RESTMapping(gk, "v2"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(gk); err != nil {
		t.Fatal(err)
	}
	if _, err := m.RESTMapping(gk, "v2", "v1"); err != nil {
		t.Fatal(err)
	}
	if d.asked != 4 {
		t.Fatalf("delegate asked %d times, want 4 (v1 once, v2, none, v2+v1)", d.asked)
	}
	if got, _ := m.RESTMapping(gk, "v1"); got.Resource.Resource != "widgets" {
		t.Fatalf("remembered mapping changed by a caller: %+v", got)
	}

	// The custom resource is recreated cluster-scoped; a failed question
	// (the delegate rediscovering) makes the memo forget.
	d.scope, d.fail = meta.RESTScopeRoot, true
	var noMatch *meta.NoKindMatchError
	if _, err := m.RESTMapping(schema.GroupKind{Group: "example.com", Kind: "Gadget"}); !errors.As(err, &noMatch) {
		t.Fatalf("the delegate's error was not returned: %v", err)
	}
	d.fail = false
	if got, _ := m.RESTMapping(gk, "v1"); got.Scope != meta.RESTScopeRoot {
		t.Fatalf("after a failed question: scope %v, want the delegate's new answer", got.Scope.Name())
	}

	d.scope = meta.RESTScopeNamespace
	m.Reset()
	if got, _ := m.RESTMapping(gk, "v1"); got.Scope != meta.RESTScopeNamespace || d.resets != 1 {
		t.Fatalf("after Reset: scope %v, delegate resets %d", got.Scope.Name(), d.resets)
	}
}
