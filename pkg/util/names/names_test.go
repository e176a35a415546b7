package names

import "testing"

func TestBindingName(t *testing.T) {
	cases := map[string]struct{ kind, name, want string }{
		"deployment":         {"Deployment", "nginx", "nginx-deployment"},
		"upper case name":    {"ConfigMap", "MyConf", "myconf-configmap"},
		"colon becomes dot":  {"ClusterRole", "system:metrics", "system.metrics-clusterrole"},
		"dots are preserved": {"Service", "a.b", "a.b-service"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := BindingName(tc.kind, tc.name); got != tc.want {
				t.Errorf("BindingName(%q, %q) = %q, want %q", tc.kind, tc.name, got, tc.want)
			}
		})
	}
}

func TestNamespaceAutoProvisioned(t *testing.T) {
	skip := map[string]string{"namespace.karmada.io/skip-auto-propagation": "True"}
	cases := map[string]struct {
		name   string
		labels map[string]string
		want   bool
	}{
		"user namespace":           {"team-a", nil, true},
		"default":                  {"default", nil, false},
		"any kube- prefix":         {"kube-flannel", nil, false},
		"karmada reserved":         {"karmada-system", nil, false},
		"execution space":          {"karmada-es-member1", nil, false},
		"atoll's own":              {SystemNamespace, nil, false},
		"skip label, any case":     {"team-b", skip, false},
		"skip label set otherwise": {"team-c", map[string]string{"namespace.karmada.io/skip-auto-propagation": "no"}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := NamespaceAutoProvisioned(tc.name, tc.labels); got != tc.want {
				t.Errorf("NamespaceAutoProvisioned(%q, %v) = %v, want %v", tc.name, tc.labels, got, tc.want)
			}
		})
	}
}
