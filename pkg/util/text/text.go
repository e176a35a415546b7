// Package text holds string helpers shared by the controllers that write
// human-readable messages into API objects (status messages, events).
package text

import "unicode/utf8"

// ellipsis marks a message that Truncate shortened.
const ellipsis = "..."

// Truncate returns s if it fits in limit bytes; otherwise it cuts s so
// that the result, ellipsis included, is at most limit bytes. The cut never
// splits a UTF-8 character: API servers keep strings as UTF-8, and half a
// character would come back as U+FFFD. Bytes of s that are not valid UTF-8
// are kept as they are; only the cut point is moved. With a limit too small
// for the ellipsis the result is just s cut at a character boundary.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	if limit <= 0 {
		return ""
	}
	cut, tail := limit-len(ellipsis), ellipsis
	if cut <= 0 {
		cut, tail = limit, ""
	}
	// A character is at most utf8.UTFMax bytes, so at most UTFMax-1 of
	// them are continuation bytes to step back over.
	for back := 0; cut > 0 && back < utf8.UTFMax-1 && !utf8.RuneStart(s[cut]); back++ {
		cut--
	}
	return s[:cut] + tail
}
