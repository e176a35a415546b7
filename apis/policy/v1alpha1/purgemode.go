package v1alpha1

// PurgeMode says what happens to the copy of an application on the cluster it
// is being moved away from during failover.
type PurgeMode string

const (
	// PurgeModeDirectly removes the old copy before the replacement is created.
	// Use it for applications that must never run twice at the same time, for
	// example exactly-once stream processors.
	PurgeModeDirectly PurgeMode = "Directly"

	// PurgeModeGracefully keeps the old copy until the replacement is healthy
	// or a grace period has passed, whichever comes first.
	PurgeModeGracefully PurgeMode = "Gracefully"

	// PurgeModeNever keeps the old copy; an operator decides when to remove it.
	PurgeModeNever PurgeMode = "Never"

	// PurgeModeImmediately is the pre-v1.15 Karmada spelling of Directly.
	// Karmada v1.19 no longer accepts it, but atoll does because many
	// published manifests still use it. Controllers treat it as Directly;
	// call NormalizePurgeMode before comparing.
	//
	// Deprecated: use PurgeModeDirectly.
	PurgeModeImmediately PurgeMode = "Immediately"

	// PurgeModeGraciously is the pre-v1.15 Karmada spelling of Gracefully.
	// Karmada v1.19 no longer accepts it, but atoll does because many
	// published manifests still use it. Controllers treat it as Gracefully;
	// call NormalizePurgeMode before comparing.
	//
	// Deprecated: use PurgeModeGracefully.
	PurgeModeGraciously PurgeMode = "Graciously"
)

// NormalizePurgeMode maps the deprecated spellings Immediately and Graciously
// to Directly and Gracefully. Every other value, including the empty string,
// is returned unchanged, so callers still apply their own default for "".
func NormalizePurgeMode(mode PurgeMode) PurgeMode {
	switch mode {
	case PurgeModeImmediately:
		return PurgeModeDirectly
	case PurgeModeGraciously:
		return PurgeModeGracefully
	default:
		return mode
	}
}
