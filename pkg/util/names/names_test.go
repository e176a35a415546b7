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
