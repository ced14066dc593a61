// Copyright The berth authors.
// SPDX-License-Identifier: Apache-2.0

package tap

import (
	"bytes"
	"testing"
)

func newBuffered() (*T, *bytes.Buffer) {
	var buf bytes.Buffer
	t := New()
	t.Writer = &buf
	return t, &buf
}

func TestStream(t *testing.T) {
	tp, buf := newBuffered()
	tp.Header(0)
	tp.Ok(true, "first")
	tp.Fail("second\nwith a newline")
	tp.Skip(2, "not here")
	tp.Todo().Fail("later")
	tp.Pass("a # in it")
	tp.Diagnostic("note\nmore")
	tp.Diagnosticf("n=%d", 3)
	if err := tp.YAML(map[string]string{"stdout": "ok 1\nnot ok 2\n"}); err != nil {
		t.Fatal(err)
	}
	tp.AutoPlan()
	want := `TAP version 13
ok 1 - first
not ok 2 - second with a newline
ok 3 # SKIP not here
ok 4 # SKIP not here
not ok 5 - later # TODO
ok 6 - a \# in it
# note
# more
# n=3
  ---
  {
    "stdout": "ok 1\nnot ok 2\n"
  }
  ...
1..6
`
	if got := buf.String(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if tp.Count() != 6 {
		t.Errorf("Count() = %d, want 6", tp.Count())
	}
}

func TestHeaderWithPlan(t *testing.T) {
	tp, buf := newBuffered()
	tp.Header(1)
	tp.Skip(1, "whole suite")
	if got, want := buf.String(), "TAP version 13\n1..1\nok 1 # SKIP whole suite\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestYAMLError(t *testing.T) {
	tp, buf := newBuffered()
	if err := tp.YAML(map[string]interface{}{"f": func() {}}); err == nil {
		t.Error("YAML of a func: want an error")
	}
	if buf.Len() != 0 {
		t.Errorf("YAML wrote %q after failing", buf.String())
	}
}
