package table

import (
	"bytes"
	"strings"
	"testing"
)

func TestTable(t *testing.T) {
	var b bytes.Buffer
	tb := New(&b, "NAME", "READY")
	tb.Row("member1", "")
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "NAME      READY\nmember1   -\n"
	if b.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", b.String(), want)
	}
	if strings.Contains(b.String(), "\t") {
		t.Error("tabs in output")
	}
}
