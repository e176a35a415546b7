// Package selection reads Kubernetes-style on/off lists such as
// --controllers: "*" selects everything, "name" selects one, "-name"
// deselects one, and the first entry naming an item wins.
package selection

// Enabled reports whether name is selected by list. An empty list selects
// nothing; callers with another default handle it first.
func Enabled(name string, list []string) bool {
	enabled := false
	for _, s := range list {
		switch s {
		case "*":
			enabled = true
		case name:
			return true
		case "-" + name:
			return false
		}
	}
	return enabled
}
