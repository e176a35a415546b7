package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	cases := map[string]struct {
		s     string
		limit int
		want  string
	}{
		"fits":                    {"hello", 5, "hello"},
		"empty":                   {"", 3, ""},
		"cut with ellipsis":       {"hello world", 8, "hello..."},
		"limit too small for ...": {"hello", 2, "he"},
		"limit zero":              {"hello", 0, ""},
		"negative limit":          {"hello", -1, ""},
		"does not split é":        {"aé" + "bcdef", 5, "a..."}, // "aé" is 3 bytes; cutting at 2 would split é
		"keeps a whole é":         {"aéb" + "cdef", 6, "aé..."},
		"does not split a 4-byte": {"ab🙂cdefgh", 7, "ab..."},
		"small limit inside é":    {"éé", 1, ""},
		"invalid bytes kept":      {"a\xffbcdefgh", 6, "a\xffb..."},
		"continuation run at cut": {"ab\x80\x80\x80\x80\x80cd", 6, "a..."},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := Truncate(tc.s, tc.limit)
			if got != tc.want {
				t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.limit, got, tc.want)
			}
			if tc.limit >= 0 && len(got) > tc.limit {
				t.Errorf("Truncate(%q, %d) = %q: %d bytes, over the limit", tc.s, tc.limit, got, len(got))
			}
		})
	}
}

// Every cut of valid UTF-8 is valid UTF-8 and within the limit.
func TestTruncateValidUTF8AtEveryLimit(t *testing.T) {
	s := strings.Repeat("aé中🙂", 20)
	for limit := 0; limit <= len(s)+1; limit++ {
		got := Truncate(s, limit)
		if len(got) > limit {
			t.Fatalf("limit %d: %d bytes", limit, len(got))
		}
		if !utf8.ValidString(got) {
			t.Fatalf("limit %d: %q is not valid UTF-8", limit, got)
		}
		if limit >= len(s) && got != s {
			t.Fatalf("limit %d: shortened a string that fits", limit)
		}
	}
}
