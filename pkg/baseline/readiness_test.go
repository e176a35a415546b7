package baseline

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const (
	deploymentAvailable = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: kube-system, generation: 2}
spec: {replicas: 2}
status:
  observedGeneration: 2
  replicas: 2
  updatedReplicas: 2
  readyReplicas: 2
  availableReplicas: 2
  conditions:
  - {type: Available, status: "True"}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}
`
	deploymentLessAvailable = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: kube-system, generation: 2}
spec: {replicas: 2}
status:
  observedGeneration: 2
  replicas: 2
  updatedReplicas: 2
  readyReplicas: 1
  availableReplicas: 1
  conditions:
  - {type: Available, status: "False"}
  - {type: Progressing, status: "True", reason: ReplicaSetUpdated}
`
	deploymentDeadlineExceeded = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: agent, namespace: kube-system, generation: 2}
spec: {replicas: 2}
status:
  observedGeneration: 2
  replicas: 2
  updatedReplicas: 2
  conditions:
  - {type: Progressing, status: "False", reason: ProgressDeadlineExceeded}
`
	jobComplete = `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: default}
status:
  succeeded: 1
  conditions:
  - {type: Complete, status: "True"}
`
	jobFailed = `
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: default}
status:
  failed: 6
  conditions:
  - {type: Failed, status: "True", reason: BackoffLimitExceeded}
`
	crdEstablished = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
status:
  conditions:
  - {type: NamesAccepted, status: "True"}
  - {type: Established, status: "True"}
`
	crdNoConditions = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
`
	configMap = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: default}
data: {a: b}
`
	clusterRole = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: agent}
rules: []
`
	widgetNoConditions = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
spec: {size: 1}
`
	widgetReady = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
status:
  conditions:
  - {type: Ready, status: "True"}
`
	widgetRunning = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
status: {phase: Running}
`
	widgetPending = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default}
status: {phase: Pending}
`
	widgetTerminating = `
apiVersion: example.com/v1
kind: Widget
metadata: {name: w, namespace: default, deletionTimestamp: "2026-01-01T00:00:00Z"}
status:
  conditions:
  - {type: Ready, status: "True"}
`
)

func TestEvaluate(t *testing.T) {
	cases := map[string]struct {
		obj        string // YAML; empty for no object
		expression string
		want       Readiness
	}{
		"deployment available": {
			obj:  deploymentAvailable,
			want: Readiness{Ready: true, Message: "Deployment is available. Replicas: 2"},
		},
		"deployment with fewer available": {
			obj:  deploymentLessAvailable,
			want: Readiness{Message: "InProgress: Available: 1/2"},
		},
		"deployment past its progress deadline": {
			obj:  deploymentDeadlineExceeded,
			want: Readiness{Failed: true, Message: "Progress deadline exceeded"},
		},
		"job complete": {
			obj:  jobComplete,
			want: Readiness{Ready: true, Message: "Job Completed. succeeded: 1/1"},
		},
		"job failed": {
			obj:  jobFailed,
			want: Readiness{Failed: true, Message: "Job Failed. failed: 6/1"},
		},
		"crd established": {
			obj:  crdEstablished,
			want: Readiness{Ready: true, Message: "CRD is established"},
		},
		"crd without conditions": {
			obj:  crdNoConditions,
			want: Readiness{Message: "InProgress: Install in progress"},
		},
		"configmap": {
			obj:  configMap,
			want: Readiness{Ready: true, Message: "Resource is always ready"},
		},
		"clusterrole": {
			obj:  clusterRole,
			want: Readiness{Ready: true, Message: "Resource is current"},
		},
		"custom resource without conditions": {
			obj:  widgetNoConditions,
			want: Readiness{Message: "Widget has no status conditions; set readinessExpression to say what ready means"},
		},
		"custom resource Ready=True": {
			obj:  widgetReady,
			want: Readiness{Ready: true, Message: "Resource is Ready"},
		},
		"expression true on a custom resource": {
			obj:        widgetNoConditions,
			expression: "true",
			want:       Readiness{Ready: true, Message: "readinessExpression is true"},
		},
		"expression on phase, true": {
			obj:        widgetRunning,
			expression: "self.status.phase == 'Running'",
			want:       Readiness{Ready: true, Message: "readinessExpression is true"},
		},
		"expression on phase, false": {
			obj:        widgetPending,
			expression: "self.status.phase == 'Running'",
			want:       Readiness{Message: "readinessExpression is false"},
		},
		"expression on a missing field": {
			obj:        widgetNoConditions,
			expression: "self.status.phase == 'Running'",
			want:       Readiness{Message: "readinessExpression: no such key: status"},
		},
		"expression of another type": {
			obj:        widgetRunning,
			expression: "self.status.phase",
			want:       Readiness{Message: "readinessExpression returned string, not bool"},
		},
		"expression with string extension": {
			obj:        widgetRunning,
			expression: "self.status.phase.lowerAscii() == 'running'",
			want:       Readiness{Ready: true, Message: "readinessExpression is true"},
		},
		"expression over its cost limit": {
			obj:        widgetRunning,
			expression: "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a+b+c+d+e+f > 0))))))",
			want:       Readiness{Message: "readinessExpression: operation cancelled: actual cost limit exceeded"},
		},
		"terminating": {
			obj:  widgetTerminating,
			want: Readiness{Message: "terminating"},
		},
		"terminating, with an expression": {
			obj:        widgetTerminating,
			expression: "true",
			want:       Readiness{Message: "terminating"},
		},
		"not created": {
			want: Readiness{Message: "not created yet"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var obj *unstructured.Unstructured
			if tc.obj != "" {
				obj = parse(t, tc.obj)
			}
			if diff := cmp.Diff(tc.want, Evaluate(obj, tc.expression)); diff != "" {
				t.Errorf("Evaluate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEvaluateUncompilableExpression(t *testing.T) {
	got := Evaluate(parse(t, widgetRunning), "self.status.phase ==")
	if !got.Failed || got.Ready || !strings.HasPrefix(got.Message, "readinessExpression does not compile: ") {
		t.Errorf("Evaluate = %+v, want Failed, does not compile", got)
	}
}

// parse reads a YAML object the way the API machinery does: integers stay
// int64, as kstatus and CEL expect of an object read from a cluster.
func parse(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return obj
}
